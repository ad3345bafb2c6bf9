package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
	"github.com/mcpbridge/mcpbridge/toolview"
)

// searchChildEnv makes the test binary a gateway with tool search on its
// stdin/stdout, in front of searchRegistry (see TestMain).
const searchChildEnv = "GATEWAY_TEST_SEARCH_CHILD"

// The tools of the search tests: look-alikes, a pinned one (time) and an
// always-loaded server's (fs, as an mcp-client entry with alwaysLoad: true
// marks it).
const (
	screenshot = "mcp__playwright__browser_take_screenshot"
	ghIssue    = "mcp__github__create_issue"
	glIssue    = "mcp__gitlab__create_issue"
	clock      = "mcp__time__get_current_time"
	readFile   = "mcp__fs__read_file"
)

// searchRegistry returns a registry of look-alike tools with a view on
// it: search on, time pinned, fs always loaded.
func searchRegistry() (*tool.Registry, *toolview.View, error) {
	reg := tool.NewRegistry()
	defs := []struct{ name, desc, params string }{
		{ghIssue, "Create a new issue in a GitHub repository.", `"owner":{"type":"string"},"repo":{"type":"string"},"title":{"type":"string"}`},
		{glIssue, "Create a new issue in a GitLab project.", `"project_id":{"type":"string"},"title":{"type":"string"}`},
		{screenshot, "Take a screenshot of the current page. You can't perform actions based on the screenshot, use browser_snapshot for actions.", `"filename":{"type":"string","description":"File name to save the screenshot to"},"fullPage":{"type":"boolean"}`},
		{"mcp__playwright__browser_navigate", "Navigate to a URL", `"url":{"type":"string","description":"The URL to navigate to"}`},
		{clock, "Get the current time in a specific timezone", `"timezone":{"type":"string","description":"IANA timezone name"}`},
		{readFile, "Read the complete contents of a file from the file system.", `"path":{"type":"string"}`},
	}
	for _, d := range defs {
		server := strings.Split(d.name, "__")[1]
		t := tool.Tool{Name: d.name, Description: d.desc, Origin: tool.Origin{Server: server},
			InputSchema: json.RawMessage(`{"type":"object","properties":{` + d.params + `}}`),
			Execute:     textBody("ran " + d.name), AlwaysLoad: server == "fs"}
		if _, err := reg.Register(t); err != nil {
			return nil, nil, err
		}
	}
	v, err := toolview.New(reg, toolview.Config{Mode: toolview.ModeOn, Pinned: []string{"mcp__time__*"}})
	return reg, v, err
}

// searchGateway is a gateway giving each client session its own view.
func searchGateway(t *testing.T) (*tool.Registry, *Gateway) {
	t.Helper()
	reg, v, err := searchRegistry()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	return reg, newGateway(t, reg, Options{NewView: func() View { return v.NewSession() }})
}

// runSearchChild serves searchGateway's gateway on stdio until stdin
// closes and returns the exit status.
func runSearchChild() int {
	reg, v, err := searchRegistry()
	if err != nil {
		os.Stderr.WriteString("search child: " + err.Error() + "\n")
		return 1
	}
	defer v.Close()
	g := New(reg, Options{NewView: func() View { return v.NewSession() }})
	defer g.Close()
	if err := g.ServeStdio(context.Background(), os.Stdin, os.Stdout); err != nil {
		os.Stderr.WriteString("search child: " + err.Error() + "\n")
		return 1
	}
	return 0
}

// startTools is what every session lists before a search.
var startTools = []string{readFile, clock, toolview.SearchName}

// foundIn returns the names in a search_tools result.
func foundIn(t *testing.T, res *mcp.CallToolResult) []string {
	t.Helper()
	var found struct{ Tools []toolview.Found }
	if err := json.Unmarshal([]byte(strings.Join(texts(res), "")), &found); err != nil || res.IsError {
		t.Fatalf("search_tools answered %v: %v", texts(res), err)
	}
	var out []string
	for _, f := range found.Tools {
		out = append(out, f.Name)
	}
	return out
}

// Each client session lists the pinned and always-loaded tools and
// search_tools; its search loads the matches for it alone, with a
// list_changed to it alone; a registry change still reaches every
// session; a tool not listed to a session runs when called by name.
func TestViewPerSession(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			reg, g := searchGateway(t)
			a, b := connectInMemoryAt(t, g, version), connectInMemoryAt(t, g, version)
			if got := a.session.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("the session speaks %s", got)
			}
			assertList(t, "a before", a.names(t), startTools)
			assertList(t, "b before", b.names(t), startTools)

			found := foundIn(t, a.call(t, toolview.SearchName, `{"query":"save a picture of what the browser shows","limit":1}`))
			assertList(t, "found", found, []string{screenshot})
			waitSignal(t, a.changed, "list_changed after a's search")
			assertList(t, "a after", a.names(t), []string{readFile, screenshot, clock, toolview.SearchName})
			assertList(t, "b after", b.names(t), startTools)
			if got := texts(a.call(t, screenshot, `{}`)); !slices.Equal(got, []string{"ran " + screenshot}) {
				t.Errorf("the loaded tool answered %v", got)
			}
			if got := texts(b.call(t, glIssue, `{}`)); !slices.Equal(got, []string{"ran " + glIssue}) {
				t.Errorf("a tool b does not list, called by name, answered %v", got)
			}

			// A registry change reaches both; b heard nothing before it.
			if _, err := reg.Register(goTool("mcp__notes__add", textBody("added"))); err != nil {
				t.Fatal(err)
			}
			waitSignal(t, b.changed, "list_changed to b after a registry change")
			if n := b.listChanged.Load(); n != 1 {
				t.Errorf("b heard %d list_changed, want 1 (the registry's; a's search is not its business)", n)
			}
			waitSignal(t, a.changed, "list_changed to a after a registry change")
			assertList(t, "b after the change", b.names(t), startTools)
		})
	}
}

// Over Streamable HTTP, a session's search loads for that session too,
// and list_changed reaches its GET stream.
func TestViewPerSessionHTTP(t *testing.T) {
	_, g := searchGateway(t)
	base := serveHTTP(t, g, Options{})
	a, b := connectHTTP(t, base, nil), connectHTTP(t, base, nil)
	foundIn(t, a.call(t, toolview.SearchName, `{"query":"open an issue on GitLab"}`))
	waitSignal(t, a.changed, "list_changed after a's search")
	if got := a.names(t); !slices.Contains(got, glIssue) {
		t.Errorf("a lists %v after its search", got)
	}
	assertList(t, "b", b.names(t), startTools)
}

// Stateless, every request is a session of its own: a search loads for
// nobody who lists later, the found tool runs by name, and the views of
// the requests that ended are forgotten.
func TestViewStateless(t *testing.T) {
	reg, v, err := searchRegistry()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	opts := Options{Stateless: true, NewView: func() View { return v.NewSession() }}
	g := newGateway(t, reg, opts)
	c := connectHTTP(t, serveHTTP(t, g, opts), nil)
	found := foundIn(t, c.call(t, toolview.SearchName, `{"query":"open an issue on GitLab","limit":1}`))
	assertList(t, "found", found, []string{glIssue})
	assertList(t, "listed after the search", c.names(t), startTools)
	if got := texts(c.call(t, glIssue, `{}`)); !slices.Equal(got, []string{"ran " + glIssue}) {
		t.Errorf("the found tool answered %v", got)
	}
	c.names(t)
	if n := g.books()["views"]; n > 2 {
		t.Errorf("%d views kept after four requests, one at a time", n)
	}
}

func assertList(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got %v\nwant %v", what, got, want)
	}
}

// nodeSearch is what testdata/node_search.mjs prints.
type nodeSearch struct {
	Tools      []string `json:"tools"`
	Found      []string `json:"found"`
	ToolsAfter []string `json:"toolsAfter"`
	Called     nodeCall `json:"called"`
}

// The real TypeScript SDK client, over Streamable HTTP and over stdio:
// it lists, searches, receives list_changed, lists again and calls the
// tool its search found.
func TestNodeClientSearch(t *testing.T) {
	check := func(t *testing.T, env []string, args ...string) {
		t.Helper()
		var res nodeSearch
		runNodeClient(t, &res, append(env, "SEARCH_QUERY=save a picture of what the browser shows"), args...)
		assertList(t, "tools", res.Tools, startTools)
		assertList(t, "found", res.Found, []string{screenshot})
		assertList(t, "tools after", res.ToolsAfter, []string{readFile, screenshot, clock, toolview.SearchName})
		if got, _ := json.Marshal(res.Called.Content); res.Called.IsError || string(got) != `[{"type":"text","text":"ran `+screenshot+`"}]` {
			t.Errorf("the found tool answered %s (isError %v)", got, res.Called.IsError)
		}
	}
	t.Run("http", func(t *testing.T) {
		_, g := searchGateway(t)
		check(t, nil, "http", serveHTTP(t, g, Options{})+"/mcp")
	})
	t.Run("stdio", func(t *testing.T) {
		check(t, []string{searchChildEnv + "=1"}, "stdio", os.Args[0])
	})
}

// BenchmarkViewList is one tools/list of 2,000 tools in memory: without
// views; with a session view but no tool-search entry (what serve does
// without one); and with search on, one server pinned, the page narrowed
// to the view.
func BenchmarkViewList(b *testing.B) {
	for _, withView := range []string{"none", "no-entry", "search-on"} {
		b.Run("view="+withView, func(b *testing.B) {
			reg := tool.NewRegistry()
			for i := range 2000 {
				t := goTool(fmt.Sprintf("mcp__s%d__tool_%d", i%50, i), textBody("x"))
				t.Origin.Server = fmt.Sprintf("s%d", i%50)
				if _, err := reg.Register(t); err != nil {
					b.Fatal(err)
				}
			}
			var opts Options
			if withView == "no-entry" {
				opts.NewView = func() View { return toolview.NewSession(reg, func() *toolview.View { return nil }) }
			}
			if withView == "search-on" {
				v, err := toolview.New(reg, toolview.Config{Mode: toolview.ModeOn, Pinned: []string{"mcp__s1__*"}})
				if err != nil {
					b.Fatal(err)
				}
				// Cleanups, not defers: they run after the session's.
				b.Cleanup(v.Close)
				opts.NewView = func() View { return v.NewSession() }
			}
			g := New(reg, opts)
			b.Cleanup(func() { g.Close() })
			cs, _ := connectClient(b, g, mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cs.ListTools(context.Background(), nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
