package cli

import (
	"strings"
	"testing"
)

// secret is what the test's ${VAR}s expand to; no output may contain it.
const secret = "hunter2-s3cr3t"

func TestValidateOK(t *testing.T) {
	t.Setenv("VALIDATE_TOKEN", secret)
	t.Setenv("VALIDATE_HOST", secret+".example")
	inDir(t, `# three servers
- id: github
  name: mcp-client
  config:
    serverName: github
    transport: stdio
    command: github-mcp-server
    env: {GITHUB_PERSONAL_ACCESS_TOKEN: "${VALIDATE_TOKEN}"}
- id: web
  name: mcp-client
  config:
    serverName: web
    transport: streamable-http
    url: https://${VALIDATE_HOST}/mcp
    headers: {Authorization: "Bearer ${VALIDATE_TOKEN}"}
- id: parked
  name: mcp-client
  disabled: true
  config: {half: written}
`)
	r := mcpbridge(t, "", "validate")
	if r.code != ExitOK || r.stderr != "" {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	golden(t, "validate-ok.txt", r.stdout)
	if strings.Contains(r.stdout, secret) {
		t.Errorf("validate printed an expanded secret:\n%s", r.stdout)
	}

	// Starting nothing: a server that does not exist is still valid.
	if r := mcpbridge(t, "", "validate", "--config", "mcpbridge.yaml"); r.code != ExitOK {
		t.Errorf("--config: exit %d", r.code)
	}
	inDir(t, "# nothing yet\n")
	if r := mcpbridge(t, "", "validate"); r.code != ExitOK || r.stdout != "mcpbridge.yaml: OK, 0 entries (0 enabled, 0 disabled)\n" {
		t.Errorf("empty file: exit %d, %q", r.code, r.stdout)
	}
}

func TestValidateErrors(t *testing.T) {
	t.Setenv("VALIDATE_URL", "ftp://"+secret+"@example.com/mcp")
	t.Setenv("VALIDATE_TOKEN", "bad\nvalue "+secret)
	inDir(t, `- id: web
  name: mcp-client
  config:
    serverName: web
    transport: streamable-http
    url: ${VALIDATE_URL}
    headers: {Authorization: "${VALIDATE_TOKEN}"}
- id: web
  name: mcp-client
  config: {serverName: web2, transport: stdio, command: x}
- id: gh
  name: mcp-client
  config:
    serverName: web
    transport: stdio
    command: x
    env: {T: "${VALIDATE_UNSET}"}
    toolCallTimeoutMs: 0
- id: other
  name: no-such-plugin
- id: ok
  name: mcp-client
  config: {serverName: shared, transport: stdio, command: y}
- id: dup
  name: mcp-client
  config: {serverName: shared, transport: stdio, command: z}
`)
	r := mcpbridge(t, "", "validate")
	if r.code != ExitUsage || r.stdout != "" {
		t.Fatalf("exit %d, want 2\nstdout: %s", r.code, r.stdout)
	}
	golden(t, "validate-errors.txt", r.stderr)
	if strings.Contains(r.stderr, secret) {
		t.Errorf("validate printed an expanded secret:\n%s", r.stderr)
	}

	t.Chdir(t.TempDir())
	// A file that is not there is not an invalid config: said as itself,
	// with what to do.
	for _, cmd := range []string{"validate", "tools"} {
		want := "mcpbridge: config file missing.yaml does not exist: correct the path, or create it (mcpbridge add --config missing.yaml NAME -- COMMAND)\n"
		if r := mcpbridge(t, "", cmd, "--config", "missing.yaml"); r.code != ExitUsage || r.stderr != want {
			t.Errorf("%s of a missing file: exit %d\n%s\nwant exit 2 and\n%s", cmd, r.code, r.stderr, want)
		}
	}
}
