package toolview

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/tool"
)

// searchIn calls search_tools through the registry with s bound, as a
// gateway runs one client session's call.
func searchIn(t *testing.T, reg *tool.Registry, s *Session, args string) []string {
	t.Helper()
	res, err := reg.Execute(s.Bind(context.Background()), SearchName, json.RawMessage(args))
	if err != nil || res.IsError {
		t.Fatalf("search_tools %s: %v %s", args, err, res.Text())
	}
	var out struct{ Tools []Found }
	if err := json.Unmarshal(res.Value, &out); err != nil {
		t.Fatal(err)
	}
	return foundNames(out.Tools)
}

// Two sessions of one view load their own tools: a search in one shows
// nothing new to the other, nor to the View's own model; Grown says when
// a search gave a session something new, once.
func TestSessionsLoadTheirOwn(t *testing.T) {
	reg := tool.NewRegistry()
	publish(t, reg, catalog)
	v := newView(t, reg, Config{Mode: ModeOn, Pinned: []string{"mcp__time__*"}})
	a, b := v.NewSession(), v.NewSession()
	start := []string{"mcp__time__get_current_time", SearchName}
	assertNames(t, "a before", visible(t, a), start)

	found := searchIn(t, reg, a, `{"query":"save a screenshot of the page I am on","limit":1}`)
	assertNames(t, "found", found, []string{"mcp__playwright__browser_take_screenshot"})
	if !a.Grown() || a.Grown() || b.Grown() {
		t.Error("Grown: want true once for a, never for b")
	}
	assertNames(t, "a after", visible(t, a), []string{"mcp__playwright__browser_take_screenshot", "mcp__time__get_current_time", SearchName})
	assertNames(t, "b after", visible(t, b), start)
	assertNames(t, "the view's own model", visible(t, v), start)
	assertNames(t, "a loaded", a.Loaded(), found)
	if len(b.Loaded()) != 0 || len(v.Loaded()) != 0 {
		t.Errorf("loaded elsewhere: b %v, view %v", b.Loaded(), v.Loaded())
	}

	// A search finding only what the session sees already grows nothing.
	searchIn(t, reg, a, `{"query":"save a screenshot of the page I am on","limit":1}`)
	if a.Grown() {
		t.Error("a search that found nothing new grew the session")
	}
	if _, err := reg.Execute(a.Bind(context.Background()), SearchName, json.RawMessage(`{"query":""}`)); err != nil {
		t.Fatal(err)
	} else if a.Grown() {
		t.Error("a failed search grew the session")
	}
}

// A session follows the view its function returns (a reload replaces it)
// and keeps what it loaded; with no view it sees the whole catalog.
func TestSessionFollowsTheView(t *testing.T) {
	reg := tool.NewRegistry()
	publish(t, reg, catalog)
	var current *View
	s := NewSession(reg, func() *View { return current })
	if got := visible(t, s); len(got) != len(catalog) {
		t.Fatalf("no view: the session sees %v", got)
	}
	current = newView(t, reg, Config{Mode: ModeOn})
	searchIn(t, reg, s, `{"query":"what time is it in Tokyo","limit":1}`)
	current.Close()
	current = newView(t, reg, Config{Mode: ModeOn, AlwaysLoad: []string{"gitlab"}})
	assertNames(t, "after the reload", visible(t, s), []string{"mcp__gitlab__create_issue", "mcp__time__get_current_time", SearchName})
}

// A tool marked AlwaysLoad (an mcp-client entry's alwaysLoad: true) is
// visible from the start, like a pinned one.
func TestAlwaysLoadTool(t *testing.T) {
	reg := tool.NewRegistry()
	publish(t, reg, catalog)
	marked := goTool(def{"notes", "add_note", "Add a note"})
	marked.AlwaysLoad = true
	if _, err := reg.Register(marked); err != nil {
		t.Fatal(err)
	}
	v := newView(t, reg, Config{Mode: ModeOn})
	if got := visible(t, v); !slices.Equal(got, []string{"mcp__notes__add_note", SearchName}) {
		t.Errorf("visible %v", got)
	}
}

// A permission check slow to decide (a gateway's policy) holds up no
// listing: while one session's search waits on it, that session, another
// and the View's own model list their tools. The search still answers and
// loads only the allowed tools, best first.
func TestPermissionCheckedOutsideTheLocks(t *testing.T) {
	reg := tool.NewRegistry()
	publish(t, reg, catalog)
	v := newView(t, reg, Config{Mode: ModeOn})
	a, b := v.NewSession(), v.NewSession()
	var blocked bool
	var once sync.Once
	listed := make(chan struct{})
	allowed := func(name string) bool {
		once.Do(func() {
			go func() {
				defer close(listed)
				for _, l := range []interface{ Tools() ([]tool.Tool, error) }{a, b, v} {
					_, _ = l.Tools()
				}
			}()
			select {
			case <-listed:
			case <-time.After(5 * time.Second):
				blocked = true
			}
		})
		return name != "mcp__github__create_issue"
	}
	ctx := tool.WithVisible(a.Bind(context.Background()), allowed)
	res, err := reg.Execute(ctx, SearchName, json.RawMessage(`{"query":"create an issue","limit":1}`))
	if err != nil || res.IsError {
		t.Fatalf("search_tools: %v %s", err, res.Text())
	}
	<-listed
	if blocked {
		t.Error("listing tools waited for search_tools' permission check")
	}
	want := []string{"mcp__gitlab__create_issue"}
	if !strings.Contains(res.Text(), want[0]) || strings.Contains(res.Text(), "mcp__github__create_issue") {
		t.Errorf("search_tools answered %s, want %v alone", res.Text(), want)
	}
	assertNames(t, "a loaded", a.Loaded(), want)
	if !a.Grown() {
		t.Error("the search grew nothing")
	}
}
