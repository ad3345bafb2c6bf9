package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// failingEntry is a server that fails to start as npx does for a package
// that is not cached, with its entry's secret (from MCPBRIDGE_TEST_TOKEN),
// a URL with a token and an escape sequence in what it prints.
const failingEntry = `- id: typo
  name: mcp-client
  config:
    serverName: typo
    transport: stdio
    command: sh
    args:
      - -c
      - |
        echo 'npm error code ENOTCACHED' >&2
        printf 'npm error request to https://registry.npmjs.org/@x/server-everythng?token=abc failed, key %s\033[2J\n' "$API_TOKEN" >&2
        exit 1
    env:
      API_TOKEN: ${MCPBRIDGE_TEST_TOKEN}
`

// npxSecret is failingEntry's secret.
const npxSecret = "sk-very-secret-token-123"

// A server that fails to start says why in status, status --json and
// call: the last lines of its stderr, secrets redacted, as npx prints for
// a package that is not cached. Before, all three said only
// `connection closed: calling "initialize": client is closing: EOF`.
func TestStartFailureShowsStderr(t *testing.T) {
	t.Setenv("MCPBRIDGE_TEST_TOKEN", npxSecret)
	cfg := writeConfig(t, failingEntry)
	const cause = `exit status 1); stderr: npm error code ENOTCACHED | npm error request to https://registry.npmjs.org/… failed, key [redacted]\x1b[2J`

	status := mcpbridge(t, "", "status", "--config", cfg)
	if status.code != ExitFailed || !strings.Contains(status.stdout, "typo: failed: ") || !strings.Contains(status.stdout, cause) {
		t.Errorf("status: exit %d, stdout:\n%s\nwant exit 1 and the cause %q", status.code, status.stdout, cause)
	}

	js := mcpbridge(t, "", "status", "--json", "--config", cfg)
	var doc struct {
		Servers []struct {
			Error string `json:"error"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(js.stdout), &doc); err != nil || len(doc.Servers) != 1 || !strings.Contains(doc.Servers[0].Error, cause) {
		t.Errorf("status --json: %v, stdout:\n%s\nwant the error to quote %q", err, js.stdout, cause)
	}

	call := mcpbridge(t, "", "call", "--config", cfg, "mcp__typo__echo", "{}")
	if call.code != ExitFailed || !strings.Contains(call.stderr, `mcpbridge: server "typo" failed: `) || !strings.Contains(call.stderr, cause) {
		t.Errorf("call: exit %d, stderr:\n%s\nwant exit 1 and the cause %q", call.code, call.stderr, cause)
	}

	for _, r := range []run{status, js, call} {
		if strings.Contains(r.stdout+r.stderr, npxSecret) {
			t.Errorf("the secret is shown:\n%s%s", r.stdout, r.stderr)
		}
	}
}
