package cli

import (
	"strings"
	"testing"
)

// call --arg and --timeout on a real server.
func TestCallArgAndTimeout(t *testing.T) {
	inDir(t, fixtureEntries(t, "f"))
	r := mcpbridge(t, "", "call", "mcp__f__add", "--arg", "a=2", "--arg", "b=40")
	if r.code != ExitOK || strings.TrimSpace(r.stdout) != "42" {
		t.Errorf("--arg: %+v", r)
	}
	r = mcpbridge(t, "", "call", "mcp__f__add", `{"a": 1}`, "--arg", "b=1")
	if r.code != ExitOK || strings.TrimSpace(r.stdout) != "2" {
		t.Errorf("JSON and --arg: %+v", r)
	}
	r = mcpbridge(t, "", "call", "mcp__f__add", "--arg", "a=two", "--arg", "b=1")
	if r.code != ExitUsage || !strings.Contains(r.stderr, `--arg a=two: want number, got "two"`) || r.stdout != "" {
		t.Errorf("a bad value: %+v", r)
	}
	r = mcpbridge(t, "", "call", "mcp__f__slow", "--arg", "ms=60000", "--timeout", "200ms")
	if r.code != ExitFailed || !strings.Contains(r.stderr, "no result within --timeout 200ms") {
		t.Errorf("--timeout: %+v", r)
	}
	if r := mcpbridge(t, "", "call", "mcp__f__add", "--timeout", "soon"); r.code != ExitUsage || !strings.Contains(r.stderr, `--timeout "soon"`) {
		t.Errorf("a bad --timeout: %+v", r)
	}
}

// call --task of a tool its server does not offer as a task runs it as a
// plain call, and says so rather than leave the person thinking a task ran.
func TestCallTaskOfAPlainTool(t *testing.T) {
	inDir(t, fixtureEntries(t, "f"))
	r := mcpbridge(t, "", "call", "--task", "mcp__f__add", "--arg", "a=2", "--arg", "b=40")
	if r.code != ExitOK || strings.TrimSpace(r.stdout) != "42" || !strings.Contains(r.stderr, "mcp__f__add is not offered as a task") || !strings.Contains(r.stderr, "--task runs it as a plain call") {
		t.Errorf("--task of a plain tool: %+v", r)
	}
}
