package cli

import (
	"strings"
	"testing"
)

// A stdio server that never answers says, once its startupTimeoutMs is
// out, the two ways on: a longer startupTimeoutMs in its entry, or its
// command run by hand to see whether it starts at all.
func TestStartupTimeoutSaysHowToFix(t *testing.T) {
	cfg := writeConfig(t, "- {id: h, name: mcp-client, config: {serverName: hang, transport: stdio, command: sleep, args: ['3600'], startupTimeoutMs: 300}}\n")
	want := `connecting: no answer within startupTimeoutMs (300ms): if the server is slow to start, raise startupTimeoutMs in its entry; else run its command (sleep) by hand to see whether it starts and answers on stdout`
	for _, cmd := range []string{"tools", "status"} {
		r := mcpbridge(t, "", cmd, "--config", cfg)
		if r.code != ExitFailed || !strings.Contains(r.stderr+r.stdout, want) {
			t.Errorf("%s: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 1 and %q", cmd, r.code, r.stdout, r.stderr, want)
		}
	}
}
