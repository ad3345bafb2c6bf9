package toolview

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/tokens"
	"github.com/mcpbridge/mcpbridge/tool"
)

// def is one catalog tool: server, name, description.
type def struct{ server, name, desc string }

var catalog = []def{
	{"github", "create_issue", "Create a new issue in a GitHub repository"},
	{"github", "list_pull_requests", "List pull requests of a GitHub repository"},
	{"github", "get_file_contents", "Get the contents of a file or directory from a GitHub repository"},
	{"gitlab", "create_issue", "Create a new issue in a GitLab project"},
	{"playwright", "browser_take_screenshot", "Take a screenshot of the current page"},
	{"playwright", "browser_navigate", "Navigate to a URL"},
	{"fs", "read_file", "Read the complete contents of a file from the file system"},
	{"fs", "write_file", "Create a new file or overwrite an existing file with new content"},
	{"time", "get_current_time", "Get the current time in a specific timezone"},
}

func goTool(d def) tool.Tool {
	return tool.Tool{
		Name:        "mcp__" + d.server + "__" + d.name,
		Description: d.desc,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"input":{"type":"string"}}}`),
		Origin:      tool.Origin{Server: d.server},
		Execute: func(context.Context, json.RawMessage) (tool.Output, error) {
			return tool.Output{Content: []tool.Content{tool.Text(d.name)}}, nil
		},
	}
}

// publish registers defs as one source per server.
func publish(t testing.TB, reg *tool.Registry, defs []def) map[string]*tool.Source {
	t.Helper()
	srcs := map[string]*tool.Source{}
	by := map[string][]tool.Tool{}
	for _, d := range defs {
		by[d.server] = append(by[d.server], goTool(d))
	}
	for server, tools := range by {
		srcs[server] = reg.NewSource()
		if err := srcs[server].Publish(tools...); err != nil {
			t.Fatal(err)
		}
	}
	return srcs
}

func names(tools []tool.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

// visible returns what a View's or a Session's model sees.
func visible(t *testing.T, v interface{ Tools() ([]tool.Tool, error) }) []string {
	t.Helper()
	tools, err := v.Tools()
	if err != nil {
		t.Fatal(err)
	}
	return names(tools)
}

func newView(t *testing.T, reg *tool.Registry, cfg Config) *View {
	t.Helper()
	v, err := New(reg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	return v
}

// search calls search_tools through the registry, as a model's call runs.
func search(t *testing.T, reg *tool.Registry, args string) []Found {
	t.Helper()
	res, err := reg.Execute(context.Background(), SearchName, json.RawMessage(args))
	if err != nil || res.IsError {
		t.Fatalf("search_tools %s: %v %s", args, err, res.Text())
	}
	var out struct{ Tools []Found }
	if err := json.Unmarshal(res.Value, &out); err != nil || res.Text() != string(res.Value) {
		t.Fatalf("search_tools answer %s: %v", res.Text(), err)
	}
	return out.Tools
}

func foundNames(fs []Found) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}

func assertNames(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %v\nwant %v", what, got, want)
	}
}

// With search on, the model sees the pinned tools and search_tools; each
// search loads its matches, and loaded tools stay across later searches.
func TestSearchLoadsTools(t *testing.T) {
	reg := tool.NewRegistry()
	publish(t, reg, catalog)
	v := newView(t, reg, Config{Mode: ModeOn, Pinned: []string{"mcp__time__*"}, AlwaysLoad: []string{"fs"}})
	assertNames(t, "before any search", visible(t, v),
		[]string{"mcp__fs__read_file", "mcp__fs__write_file", "mcp__time__get_current_time", SearchName})

	found := search(t, reg, `{"query":"open a ticket on gitlab","limit":1}`)
	assertNames(t, "first search", foundNames(found), []string{"mcp__gitlab__create_issue"})
	var schema map[string]any
	if f := found[0]; f.Description != "Create a new issue in a GitLab project" || json.Unmarshal(f.Parameters, &schema) != nil || schema["type"] != "object" {
		t.Errorf("match %+v lacks its description or schema", f)
	}
	found = search(t, reg, `{"query":"screenshot of the web page","limit":1}`)
	assertNames(t, "second search", foundNames(found), []string{"mcp__playwright__browser_take_screenshot"})
	assertNames(t, "after two searches", visible(t, v), []string{
		"mcp__fs__read_file", "mcp__fs__write_file", "mcp__gitlab__create_issue",
		"mcp__playwright__browser_take_screenshot", "mcp__time__get_current_time", SearchName,
	})
	assertNames(t, "Loaded", v.Loaded(), []string{"mcp__gitlab__create_issue", "mcp__playwright__browser_take_screenshot"})

	// A loaded tool runs through the registry like any other.
	res, err := reg.Execute(context.Background(), "mcp__gitlab__create_issue", nil)
	if err != nil || res.Text() != "create_issue" {
		t.Errorf("loaded tool: %v %q", err, res.Text())
	}
}

// A tool the view has shown stays in it when its server republishes (a
// restart), without another search; one it never showed does not appear.
func TestShownToolsStay(t *testing.T) {
	reg := tool.NewRegistry()
	srcs := publish(t, reg, catalog)
	v := newView(t, reg, Config{Mode: ModeOn})
	search(t, reg, `{"query":"list pull requests","limit":1}`)
	want := []string{"mcp__github__list_pull_requests", SearchName}
	assertNames(t, "loaded", visible(t, v), want)

	srcs["github"].Clear()
	assertNames(t, "server gone", visible(t, v), []string{SearchName})
	gh := []tool.Tool{}
	for _, d := range catalog {
		if d.server == "github" {
			gh = append(gh, goTool(d))
		}
	}
	if err := srcs["github"].Publish(gh...); err != nil {
		t.Fatal(err)
	}
	assertNames(t, "server back", visible(t, v), want)
}

// A server that stops listing a tool takes it from the view, so that what
// a view and its sessions keep stays as large as the catalog: a server
// that renamed its tools at every re-sync (always loaded, or found by
// searches) grew every model's selection by its names, for good.
func TestRenamedToolsAreForgotten(t *testing.T) {
	reg := tool.NewRegistry()
	srcs := publish(t, reg, catalog)
	churn := reg.NewSource()
	t.Cleanup(churn.Close)
	v := newView(t, reg, Config{Mode: ModeOn, AlwaysLoad: []string{"churn"}})
	s, searcher := v.NewSession(), v.NewSession() // searcher never lists
	for i := range 50 {
		name := fmt.Sprintf("rotate_%d", i)
		if err := churn.Publish(goTool(def{"churn", name, "Rotate the key, generation " + name})); err != nil {
			t.Fatal(err)
		}
		want := []string{"mcp__churn__" + name, SearchName}
		assertNames(t, "view", visible(t, v), want)
		assertNames(t, "session", visible(t, s), want)
		search(t, reg, `{"query":"rotate the key","limit":1}`)
		searchIn(t, reg, s, `{"query":"rotate the key","limit":1}`)
		searchIn(t, reg, searcher, `{"query":"rotate the key","limit":1}`)
	}
	for what, sel := range map[string]*selection{"view": &v.sel, "session": &s.sel, "searching session": &searcher.sel} {
		if len(sel.shown) > 2 || len(sel.loaded) > 1 {
			t.Errorf("%s keeps %d shown and %d loaded names after 50 renames, want at most 2 and 1: %v", what, len(sel.shown), len(sel.loaded), sel.names())
		}
	}

	// A server away (a restart) keeps its tools for when it is back.
	search(t, reg, `{"query":"list pull requests","limit":1}`)
	srcs["github"].Clear()
	visible(t, v)
	assertNames(t, "loaded while github is away", v.Loaded(), []string{"mcp__churn__rotate_49", "mcp__github__list_pull_requests"})
}

// ModeAuto shows the whole catalog (without search_tools) until it
// exceeds the threshold, then turns search on for good.
func TestAutoTurnsOnAboveThreshold(t *testing.T) {
	reg := tool.NewRegistry()
	publish(t, reg, catalog[:2])
	small, err := tokens.Total(reg.List())
	if err != nil {
		t.Fatal(err)
	}
	v := newView(t, reg, Config{Threshold: small, Pinned: []string{"mcp__github__create_issue"}})
	assertNames(t, "at the threshold", visible(t, v), []string{"mcp__github__create_issue", "mcp__github__list_pull_requests"})
	if on, err := v.On(); on || err != nil {
		t.Errorf("On = %v, %v at the threshold", on, err)
	}
	if n, err := v.CatalogTokens(); n != small || err != nil {
		t.Errorf("CatalogTokens = %d, %v; want %d", n, err, small)
	}

	more := publish(t, reg, catalog[4:5])
	assertNames(t, "above it", visible(t, v), []string{"mcp__github__create_issue", SearchName})
	more["playwright"].Close()
	if on, err := v.On(); !on || err != nil {
		t.Errorf("On = %v, %v after the catalog shrank back; want it to stay on", on, err)
	}
}

// The default threshold is 10% of the context window.
func TestDefaultThreshold(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want int
	}{
		{Config{}, 12_800},
		{Config{ContextWindow: 64_000}, 6_400},
		{Config{ContextWindow: 64_000, Threshold: 500}, 500},
	} {
		if got := c.cfg.threshold(); got != c.want {
			t.Errorf("%+v: threshold %d, want %d", c.cfg, got, c.want)
		}
	}
	reg := tool.NewRegistry()
	publish(t, reg, catalog)
	v := newView(t, reg, Config{})
	assertNames(t, "small catalog, default threshold", visible(t, v), names(slices.DeleteFunc(reg.List(), func(t tool.Tool) bool { return t.Name == SearchName })))
}

// ModeOff registers nothing and shows the catalog as it is.
func TestOff(t *testing.T) {
	reg := tool.NewRegistry()
	publish(t, reg, catalog)
	v := newView(t, reg, Config{Mode: ModeOff})
	if _, ok := reg.Get(SearchName); ok {
		t.Error("search_tools registered with mode off")
	}
	assertNames(t, "off", visible(t, v), names(reg.List()))
	if on, _ := v.On(); on {
		t.Error("On with mode off")
	}
}

// Bad arguments and queries are the model's errors, named.
func TestSearchErrors(t *testing.T) {
	reg := tool.NewRegistry()
	publish(t, reg, catalog)
	newView(t, reg, Config{Mode: ModeOn})
	// A query of a megabyte of distinct words (a gateway client's, searched
	// under the lock every list waits on) is refused at once: its distinct
	// terms used to be found in time quadratic in their number.
	var words strings.Builder
	for i := range 200000 {
		fmt.Fprintf(&words, "w%d ", i)
	}
	for args, want := range map[string]string{
		`{"query":""}`:                       "query is empty",
		`{"query":1}`:                        "invalid arguments",
		`{"query":"x","limit":"a"}`:          "invalid arguments",
		`{"query":"` + words.String() + `"}`: fmt.Sprintf("query is %d bytes: describe the tool you need in a sentence or two (at most 4096 bytes)", words.Len()),
	} {
		res, err := reg.Execute(context.Background(), SearchName, json.RawMessage(args))
		if err != nil || !res.IsError || !strings.Contains(res.Text(), want) {
			t.Errorf("%s: %v %q, want an error with %q", args, err, res.Text(), want)
		}
	}
	// No match is an empty list, not an error; the limit is capped.
	if got := search(t, reg, `{"query":"zzzqqq"}`); len(got) != 0 {
		t.Errorf("no match: %v", got)
	}
	many := make([]def, 30)
	for i := range many {
		many[i] = def{"bulk", fmt.Sprintf("issue_%d", i), "Create an issue"}
	}
	publish(t, reg, many)
	if got := search(t, reg, `{"query":"issue","limit":100}`); len(got) != MaxLimit {
		t.Errorf("limit 100 returned %d tools, want %d", len(got), MaxLimit)
	}
	if got := search(t, reg, `{"query":"issue"}`); len(got) != DefaultLimit {
		t.Errorf("no limit returned %d tools, want %d", len(got), DefaultLimit)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Mode: "sometimes"}, `toolSearch: mode "sometimes": want auto, on or off`},
		{Config{Threshold: -1}, "toolSearch: threshold -1: want a number of tokens >= 0"},
		{Config{ContextWindow: -5}, "toolSearch: contextWindow -5: want a number of tokens >= 0"},
		{Config{Pinned: []string{"mcp__[x"}}, `toolSearch: pinned "mcp__[x": syntax error in pattern`},
	} {
		if _, err := New(tool.NewRegistry(), c.cfg); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
	// search_tools taken by another source.
	reg := tool.NewRegistry()
	if err := reg.NewSource().Publish(tool.Tool{Name: SearchName, InputSchema: json.RawMessage(`{"type":"object"}`), Execute: goTool(catalog[0]).Execute}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(reg, Config{Mode: ModeOn}); err == nil || !strings.Contains(err.Error(), "register search_tools") {
		t.Errorf("name taken: %v", err)
	}
}
