package toolview

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// A pinned name that matches no tool (a typo) is reported once its
// server's tools are known, with the server's closest tool name, and
// only once; a name whose server has not published yet waits for it, and
// a glob or a name matching a tool is never reported.
func TestUnmatchedPins(t *testing.T) {
	reg := tool.NewRegistry()
	srcs := publish(t, reg, catalog)
	v := newView(t, reg, Config{Mode: ModeOn, Pinned: []string{
		"mcp__github__craete_issue", // a typo
		"mcp__github__create_issue",
		"mcp__time__*",
		"mcp__fs__delete_everything", // nothing close
		"mcp__docs__serach_docs",     // docs has not published yet
		"mcp__playwright__zzz*",      // a glob matching nothing
		"local_clock",                // names no server
	}})
	want := []Unmatched{
		{Pinned: "mcp__github__craete_issue", Server: "github", Nearest: "mcp__github__create_issue"},
		{Pinned: "mcp__fs__delete_everything", Server: "fs"},
		{Pinned: "mcp__playwright__zzz*", Server: "playwright"},
	}
	if diff := cmp.Diff(want, v.Unmatched()); diff != "" {
		t.Errorf("first check (-want +got):\n%s", diff)
	}
	if got := v.Unmatched(); len(got) != 0 {
		t.Errorf("checked again: %v, want nothing (each once)", got)
	}

	publish(t, reg, []def{{"docs", "search_docs", "Search the docs"}})
	want = []Unmatched{{Pinned: "mcp__docs__serach_docs", Server: "docs", Nearest: "mcp__docs__search_docs"}}
	if diff := cmp.Diff(want, v.Unmatched()); diff != "" {
		t.Errorf("once docs published (-want +got):\n%s", diff)
	}
	if err := srcs["github"].Publish(goTool(def{"github", "create_issue", "Create an issue"})); err != nil {
		t.Fatal(err)
	}
	if got := v.Unmatched(); len(got) != 0 {
		t.Errorf("after a refresh: %v, want nothing", got)
	}
}
