package mcppeer_test

import (
	"context"
	"errors"
	"os/exec"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// fixtureConn is a client session to a fixture server over one transport,
// with the hooks that report crash and cancellation there.
type fixtureConn struct {
	cs *mcp.ClientSession
	// cancelled waits until the server has seen a slow call's cancellation.
	cancelled func(t *testing.T)
}

// fixtureTransports connects to a fixture in every way the bridge can:
// in memory, a real stdio child, and Streamable HTTP in both modes.
func fixtureTransports() []struct {
	name    string
	connect func(t *testing.T, opts *mcp.ClientOptions) fixtureConn
} {
	inProcess := func(t *testing.T, opts *mcp.ClientOptions, via func(*mcp.Server) *mcp.ClientSession) fixtureConn {
		onCancel, cancelled := signal()
		cs := via(mcppeer.Fixture(mcppeer.FixtureOptions{OnCancel: onCancel}))
		return fixtureConn{cs: cs, cancelled: func(t *testing.T) { waitFor(t, cancelled, "OnCancel") }}
	}
	return []struct {
		name    string
		connect func(t *testing.T, opts *mcp.ClientOptions) fixtureConn
	}{
		{"in-memory", func(t *testing.T, opts *mcp.ClientOptions) fixtureConn {
			return inProcess(t, opts, func(s *mcp.Server) *mcp.ClientSession { return connectInMemory(t, s, opts) })
		}},
		{"child", func(t *testing.T, opts *mcp.ClientOptions) fixtureConn {
			cs, stderr := connectChild(t, opts, "fixture")
			return fixtureConn{cs: cs, cancelled: func(t *testing.T) {
				mcptest.Eventually(t, waitLimit, func() bool { return contains(stderr.String(), "cancelled\n") }, `"cancelled" on the child's stderr`)
			}}
		}},
		{"http-stateful", func(t *testing.T, opts *mcp.ClientOptions) fixtureConn {
			return inProcess(t, opts, func(s *mcp.Server) *mcp.ClientSession {
				return connectHTTP(t, mcptest.NewHTTPServer(t, s, mcptest.HTTPOptions{}).URL, opts, nil)
			})
		}},
		{"http-stateless", func(t *testing.T, opts *mcp.ClientOptions) fixtureConn {
			return inProcess(t, opts, func(s *mcp.Server) *mcp.ClientSession {
				return connectHTTP(t, mcptest.NewHTTPServer(t, s, mcptest.HTTPOptions{Stateless: true}).URL, opts, nil)
			})
		}},
	}
}

type fixtureCall struct {
	name      string
	tool      string
	args      map[string]any
	want      any // the content blocks as plain JSON
	wantError bool
	wantSC    any // structuredContent as plain JSON, nil if absent
}

func text(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

func blocks(b ...any) []any { return b }

func fixtureCalls() []fixtureCall {
	return []fixtureCall{
		{name: "add", tool: "add", args: map[string]any{"a": 2, "b": 3}, want: blocks(text("5"))},
		{name: "add 42", tool: "add", args: map[string]any{"a": 20, "b": 22}, want: blocks(text("42"))},
		{name: "add fractions", tool: "add", args: map[string]any{"a": 1, "b": 1.5}, want: blocks(text("2.5"))},
		{name: "greet", tool: "greet", args: map[string]any{"name": "World"}, want: blocks(text("Hello, World!"))},
		{name: "fail", tool: "fail", want: blocks(text("Something went wrong")), wantError: true},
		{name: "image", tool: "image", want: blocks(
			text("Here is an image:"),
			map[string]any{"type": "image", "mimeType": "image/png", "data": mcppeer.TinyPNG},
			text("End of image."),
		)},
		{name: "crash replies", tool: "crash", want: blocks(text("crashing"))},
		{name: "dotted name", tool: "admin.reset", want: blocks(text("reset done"))},
		{name: "slow finishes", tool: "slow", args: map[string]any{"ms": 1}, want: blocks(text("slept 1 ms"))},
		{name: "slow rejects negative", tool: "slow", args: map[string]any{"ms": -1}, want: blocks(text("slow: ms must be >= 0, got -1")), wantError: true},
		{name: "structured", tool: "structured", want: blocks(text("42")), wantSC: map[string]any{"answer": 42.0}},
		{name: "badstructured", tool: "badstructured", want: blocks(text("forty-two")), wantSC: map[string]any{"answer": "forty-two"}},
		{name: "echo", tool: "echo", args: map[string]any{"message": "hi"}, want: blocks(text("Echo: hi"))},
		{name: "add_tool needs a name", tool: "add_tool", args: map[string]any{"name": ""}, want: blocks(text("add_tool: name must not be empty")), wantError: true},
	}
}

func checkCall(t *testing.T, cs *mcp.ClientSession, c fixtureCall) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", c.tool, err)
	}
	if res.IsError != c.wantError {
		t.Errorf("%s: isError = %v, want %v", c.tool, res.IsError, c.wantError)
	}
	if diff := cmp.Diff(c.want, asJSON(t, res.Content)); diff != "" {
		t.Errorf("%s: content (-want +got):\n%s", c.tool, diff)
	}
	var sc any
	if res.StructuredContent != nil {
		sc = asJSON(t, res.StructuredContent)
	}
	if diff := cmp.Diff(c.wantSC, sc); diff != "" {
		t.Errorf("%s: structuredContent (-want +got):\n%s", c.tool, diff)
	}
}

func TestFixtureOverEveryTransport(t *testing.T) {
	for _, tr := range fixtureTransports() {
		t.Run(tr.name, func(t *testing.T) {
			conn := tr.connect(t, nil)
			cs := conn.cs

			info := cs.InitializeResult()
			if info == nil || info.ServerInfo == nil || info.ServerInfo.Name != "fixture-server" || info.ServerInfo.Version != "1.0.0" {
				t.Errorf("server info = %+v, want fixture-server 1.0.0", info)
			}
			if info == nil || info.Capabilities == nil || info.Capabilities.Tools == nil || !info.Capabilities.Tools.ListChanged {
				t.Errorf("capabilities lack tools.listChanged: %+v", info)
			}

			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatalf("ListTools: %v", err)
			}
			var names []string
			for _, tl := range res.Tools {
				names = append(names, tl.Name)
			}
			slices.Sort(names)
			want := mcppeer.FixtureTools()
			slices.Sort(want)
			if diff := cmp.Diff(want, names); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			for _, c := range fixtureCalls() {
				if c.tool == "crash" && tr.name == "child" {
					continue // it would end the child; TestFixtureCrashChildExits7 covers it
				}
				t.Run(c.name, func(t *testing.T) { checkCall(t, cs, c) })
			}
		})
	}
}

// TestFixtureToolDefinitions pins the parts of the upstream contract that
// the bridge's naming and schema tests depend on.
func TestFixtureToolDefinitions(t *testing.T) {
	cs := connectInMemory(t, mcppeer.Fixture(mcppeer.FixtureOptions{}), nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	got := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		got[tl.Name] = tl
	}
	add := got["add"]
	if add == nil || add.Title != "Add Tool" || add.Description != "Adds two numbers." {
		t.Fatalf("add = %+v, want title Add Tool and description Adds two numbers.", add)
	}
	props := asJSON(t, add.InputSchema).(map[string]any)["properties"]
	wantProps := map[string]any{
		"a": map[string]any{"type": "number", "description": "First number"},
		"b": map[string]any{"type": "number", "description": "Second number"},
	}
	if diff := cmp.Diff(wantProps, props); diff != "" {
		t.Errorf("add input properties (-want +got):\n%s", diff)
	}
	wantOut := map[string]any{
		"type":       "object",
		"properties": map[string]any{"answer": map[string]any{"type": "integer"}},
		"required":   []any{"answer"},
	}
	for _, name := range []string{"structured", "badstructured"} {
		if diff := cmp.Diff(wantOut, asJSON(t, got[name].OutputSchema)); diff != "" {
			t.Errorf("%s outputSchema (-want +got):\n%s", name, diff)
		}
	}
}

func TestFixtureListChanged(t *testing.T) {
	for _, tr := range fixtureTransports() {
		t.Run(tr.name, func(t *testing.T) {
			onChange, changed := signal()
			cs := tr.connect(t, &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { onChange() },
			}).cs
			ctx := context.Background()
			hasTool := func(name string) bool {
				t.Helper()
				res, err := cs.ListTools(ctx, nil)
				if err != nil {
					t.Fatalf("ListTools: %v", err)
				}
				return slices.ContainsFunc(res.Tools, func(tl *mcp.Tool) bool { return tl.Name == name })
			}

			checkCall(t, cs, fixtureCall{tool: "add_tool", args: map[string]any{"name": "extra"}, want: blocks(text("added extra"))})
			waitFor(t, changed, "tools/list_changed after add_tool")
			if !hasTool("extra") {
				t.Fatal("extra not listed after add_tool")
			}
			checkCall(t, cs, fixtureCall{tool: "extra", want: blocks(text("runtime tool extra"))})

			checkCall(t, cs, fixtureCall{tool: "remove_tool", args: map[string]any{"name": "extra"}, want: blocks(text("removed extra"))})
			waitFor(t, changed, "tools/list_changed after remove_tool")
			if hasTool("extra") {
				t.Error("extra still listed after remove_tool")
			}
		})
	}
}

// TestFixtureSlowCancel cancels a slow call once the server reports it
// started, and checks the server saw the cancellation.
func TestFixtureSlowCancel(t *testing.T) {
	for _, tr := range fixtureTransports() {
		t.Run(tr.name, func(t *testing.T) {
			onStart, started := signal()
			conn := tr.connect(t, &mcp.ClientOptions{
				ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { onStart() },
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 600000}}
			params.SetProgressToken("slow-1")
			errc := make(chan error, 1)
			go func() {
				_, err := conn.cs.CallTool(ctx, params)
				errc <- err
			}()
			waitFor(t, started, "the slow call's start progress")
			cancel()
			if err := waitFor(t, errc, "CallTool to return"); !errors.Is(err, context.Canceled) {
				t.Errorf("CallTool after cancel = %v, want context.Canceled", err)
			}
			conn.cancelled(t)
			// The session is still usable after a cancelled call.
			checkCall(t, conn.cs, fixtureCall{tool: "echo", args: map[string]any{"message": "after"}, want: blocks(text("Echo: after"))})
		})
	}
}

func TestFixtureCrashInProcess(t *testing.T) {
	onCrash, crashed := signal()
	cs := connectInMemory(t, mcppeer.Fixture(mcppeer.FixtureOptions{OnCrash: onCrash, CrashDelay: 1}), nil)
	checkCall(t, cs, fixtureCall{tool: "crash", want: blocks(text("crashing"))})
	waitFor(t, crashed, "OnCrash")
}

func TestFixtureCrashChildExits7(t *testing.T) {
	cs, stderr := connectChild(t, nil, "fixture")
	checkCall(t, cs, fixtureCall{tool: "add", args: map[string]any{"a": 2, "b": 3}, want: blocks(text("5"))})
	checkCall(t, cs, fixtureCall{tool: "crash", want: blocks(text("crashing"))})
	errc := make(chan error, 1)
	go func() { errc <- cs.Wait() }()
	err := waitFor(t, errc, "the crashed child's session to end")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != mcppeer.CrashExitStatus {
		t.Errorf("session ended with %v, want exit status %d (stderr: %s)", err, mcppeer.CrashExitStatus, stderr.String())
	}
}

func TestFixtureWithout(t *testing.T) {
	cs := connectInMemory(t, mcppeer.Fixture(mcppeer.FixtureOptions{Without: []string{"crash", "admin.reset"}}), nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	for _, tl := range res.Tools {
		if tl.Name == "crash" || tl.Name == "admin.reset" {
			t.Errorf("%s listed although left out", tl.Name)
		}
	}
	if got, want := len(res.Tools), len(mcppeer.FixtureTools())-2; got != want {
		t.Errorf("got %d tools, want %d", got, want)
	}
}

func TestFixtureWithoutUnknownPanics(t *testing.T) {
	defer func() {
		r := recover()
		if msg, _ := r.(string); !contains(msg, `"crsh"`) || !contains(msg, "not a fixture tool") {
			t.Errorf("panic = %v, want a message naming \"crsh\"", r)
		}
	}()
	mcppeer.Fixture(mcppeer.FixtureOptions{Without: []string{"crsh"}})
}

func TestFormatNumber(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{{5, "5"}, {2.5, "2.5"}, {0, "0"}, {-3, "-3"}, {1e21, "1e+21"}, {1e-7, "1e-07"}} {
		if got := mcppeer.FormatNumber(tc.in); got != tc.want {
			t.Errorf("formatNumber(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// The SDK's notification debounce is asynchronous; a runtime tool added
// directly on the server must be callable right away.
func TestAddRuntimeTool(t *testing.T) {
	srv := mcppeer.Fixture(mcppeer.FixtureOptions{})
	cs := connectInMemory(t, srv, nil)
	mcppeer.AddRuntimeTool(srv, "direct")
	checkCall(t, cs, fixtureCall{tool: "direct", want: blocks(text("runtime tool direct"))})
}
