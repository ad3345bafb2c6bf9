package cli

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// logsConfig has a server that fails to start (failingEntry) and one
// that starts, saying so on stderr.
const logsConfig = failingEntry + `- id: chatty
  name: mcp-client
  config:
    serverName: chatty
    transport: stdio
    command: sh
    args: ["-c", "echo 'listening on stdio, see https://example.com/docs?key=abc' >&2; exec \"$0\" demo-server", "${MCPBRIDGE_EXE}"]
`

// mcpbridge logs NAME prints what that server wrote on stderr, escaped and
// redacted, and nothing of the others.
func TestLogs(t *testing.T) {
	t.Setenv("MCPBRIDGE_TEST_TOKEN", npxSecret)
	cfg := writeConfig(t, logsConfig)

	failed := mcpbridge(t, "", "logs", "--config", cfg, "typo")
	want := "npm error code ENOTCACHED\nnpm error request to https://registry.npmjs.org/… failed, key [redacted]\\x1b[2J\n"
	if diff := cmp.Diff(want, failed.stdout); diff != "" {
		t.Errorf("logs typo: stdout (-want +got):\n%s", diff)
	}
	if failed.code != ExitFailed || !strings.Contains(failed.stderr, `mcpbridge: server "typo" failed: `) {
		t.Errorf("logs typo: exit %d, stderr:\n%s\nwant exit 1 and the failure", failed.code, failed.stderr)
	}
	if strings.Contains(failed.stdout+failed.stderr, npxSecret) {
		t.Errorf("logs typo shows the secret:\n%s%s", failed.stdout, failed.stderr)
	}

	ready := mcpbridge(t, "", "logs", "--config", cfg, "chatty")
	if ready.code != 0 || ready.stdout != "listening on stdio, see https://example.com/…\n" {
		t.Errorf("logs chatty: exit %d, stdout %q, stderr:\n%s", ready.code, ready.stdout, ready.stderr)
	}
}

func TestLogsUsage(t *testing.T) {
	cfg := writeConfig(t, logsConfig)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"logs", "--config", cfg}, "logs: want NAME, the serverName of one server, got 0 arguments"},
		{[]string{"logs", "--config", cfg, "chaty"}, `logs: no server "chaty" in ` + cfg + `: did you mean "chatty"?`},
		{[]string{"logs", "--config", cfg, "nothing"}, `logs: no server "nothing" in ` + cfg + ` (its servers: typo, chatty)`},
	} {
		r := mcpbridge(t, "", tt.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q, want exit 2 and %q", tt.args[3:], r.code, r.stderr, tt.want)
		}
	}
}
