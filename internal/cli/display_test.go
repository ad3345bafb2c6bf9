package cli

import (
	"strings"
	"testing"
)

// An entry with several config errors shows each on its own line in every
// command that reports it, the lines after the first indented under it.
func TestSeveralErrorsOfOneEntryOnTheirOwnLines(t *testing.T) {
	cfg := writeConfig(t, `- id: demo
  name: mcp-client
  config:
    transport: stdio
    comand: foo
`)
	for _, cmd := range []string{"tools", "status", "list"} {
		r := mcpbridge(t, "", cmd, "--config", cfg)
		out := r.stdout + r.stderr
		if strings.Contains(out, `\n`) {
			t.Errorf("%s shows a literal \\n:\n%s", cmd, out)
		}
		for _, want := range []string{
			"\n  " + cfg + `:4:5: entry "demo": config.command: is required with transport: stdio` + "\n",
			"\n  " + cfg + `:5:5: entry "demo": config.comand: unknown key "comand"`,
		} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks the line %q:\n%s", cmd, want, out)
			}
		}
	}
}
