package cli

import (
	"strings"
	"testing"
)

// A task-required tool of server-everything (execution.taskSupport
// "required") is called as a task: created, polled at the server's
// interval, its result fetched; the report is what the call prints.
func TestCallTaskRequired(t *testing.T) {
	cfg := everythingConfig(t)
	r := mcpbridge(t, "", "call", "--config", cfg, "mcp__everything__simulate-research-query", `{"topic":"tides"}`)
	if r.code != ExitOK || !strings.Contains(r.stdout, "# Research Report: tides") || !strings.Contains(r.stdout, "Stage 4: Generating report ✓") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// An ambiguous query makes the task input_required: the server's question
// arrives during tasks/result and reaches --elicit, whose answer the
// report names.
func TestCallTaskAsks(t *testing.T) {
	cfg := everythingConfig(t)
	for _, c := range []struct{ elicit, want string }{
		{"decline", "User declined - using default interpretation"},
		{"cancel", "User cancelled - using default interpretation"},
	} {
		r := mcpbridge(t, "", "call", "--config", cfg, "--elicit", c.elicit, "mcp__everything__simulate-research-query", `{"topic":"python","ambiguous":true}`)
		if r.code != ExitOK || !strings.Contains(r.stdout, "**Clarification**: "+c.want) {
			t.Fatalf("--elicit %s: exit %d\nstdout:\n%s\nstderr:\n%s", c.elicit, r.code, r.stdout, r.stderr)
		}
	}
}
