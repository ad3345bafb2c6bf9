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
				return mcptest.ConnectHTTP(t, mcptest.NewHTTPServer(t, s, mcptest.HTTPOptions{}).URL, opts, nil)
			})
		}},
		{"http-stateless", func(t *testing.T, opts *mcp.ClientOptions) fixtureConn {
			return inProcess(t, opts, func(s *mcp.Server) *mcp.ClientSession {
				return mcptest.ConnectHTTP(t, mcptest.NewHTTPServer(t, s, mcptest.HTTPOptions{Stateless: true}).URL, opts, nil)
			})
		}},
	}
}

func fixtureCalls() []mcptest.FixtureCall {
	return []mcptest.FixtureCall{
		{Name: "add", Tool: "add", Args: map[string]any{"a": 2, "b": 3}, Want: mcptest.Blocks(mcptest.TextBlock("5"))},
		{Name: "add 42", Tool: "add", Args: map[string]any{"a": 20, "b": 22}, Want: mcptest.Blocks(mcptest.TextBlock("42"))},
		{Name: "add fractions", Tool: "add", Args: map[string]any{"a": 1, "b": 1.5}, Want: mcptest.Blocks(mcptest.TextBlock("2.5"))},
		{Name: "greet", Tool: "greet", Args: map[string]any{"name": "World"}, Want: mcptest.Blocks(mcptest.TextBlock("Hello, World!"))},
		{Name: "fail", Tool: "fail", Want: mcptest.Blocks(mcptest.TextBlock("Something went wrong")), WantError: true},
		{Name: "image", Tool: "image", Want: mcptest.Blocks(
			mcptest.TextBlock("Here is an image:"),
			map[string]any{"type": "image", "mimeType": "image/png", "data": mcppeer.TinyPNG},
			mcptest.TextBlock("End of image."),
		)},
		{Name: "crash replies", Tool: "crash", Want: mcptest.Blocks(mcptest.TextBlock("crashing"))},
		{Name: "dotted name", Tool: "admin.reset", Want: mcptest.Blocks(mcptest.TextBlock("reset done"))},
		{Name: "slow finishes", Tool: "slow", Args: map[string]any{"ms": 1}, Want: mcptest.Blocks(mcptest.TextBlock("slept 1 ms"))},
		{Name: "slow rejects negative", Tool: "slow", Args: map[string]any{"ms": -1}, Want: mcptest.Blocks(mcptest.TextBlock("slow: ms must be >= 0, got -1")), WantError: true},
		{Name: "structured", Tool: "structured", Want: mcptest.Blocks(mcptest.TextBlock("42")), WantSC: map[string]any{"answer": 42.0}},
		{Name: "badstructured", Tool: "badstructured", Want: mcptest.Blocks(mcptest.TextBlock("forty-two")), WantSC: map[string]any{"answer": "forty-two"}},
		{Name: "echo", Tool: "echo", Args: map[string]any{"message": "hi"}, Want: mcptest.Blocks(mcptest.TextBlock("Echo: hi"))},
		{Name: "add_tool needs a name", Tool: "add_tool", Args: map[string]any{"name": ""}, Want: mcptest.Blocks(mcptest.TextBlock("add_tool: name must not be empty")), WantError: true},
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
				if c.Tool == "crash" && tr.name == "child" {
					continue // it would end the child; TestFixtureCrashChildExits7 covers it
				}
				t.Run(c.Name, func(t *testing.T) { mcptest.CheckCall(t, cs, c) })
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
	props := mcptest.AsJSON(t, add.InputSchema).(map[string]any)["properties"]
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
		if diff := cmp.Diff(wantOut, mcptest.AsJSON(t, got[name].OutputSchema)); diff != "" {
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

			mcptest.CheckCall(t, cs, mcptest.FixtureCall{Tool: "add_tool", Args: map[string]any{"name": "extra"}, Want: mcptest.Blocks(mcptest.TextBlock("added extra"))})
			waitFor(t, changed, "tools/list_changed after add_tool")
			if !hasTool("extra") {
				t.Fatal("extra not listed after add_tool")
			}
			mcptest.CheckCall(t, cs, mcptest.FixtureCall{Tool: "extra", Want: mcptest.Blocks(mcptest.TextBlock("runtime tool extra"))})

			mcptest.CheckCall(t, cs, mcptest.FixtureCall{Tool: "remove_tool", Args: map[string]any{"name": "extra"}, Want: mcptest.Blocks(mcptest.TextBlock("removed extra"))})
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
			mcptest.CheckCall(t, conn.cs, mcptest.FixtureCall{Tool: "echo", Args: map[string]any{"message": "after"}, Want: mcptest.Blocks(mcptest.TextBlock("Echo: after"))})
		})
	}
}

func TestFixtureCrashInProcess(t *testing.T) {
	onCrash, crashed := signal()
	cs := connectInMemory(t, mcppeer.Fixture(mcppeer.FixtureOptions{OnCrash: onCrash, CrashDelay: 1}), nil)
	mcptest.CheckCall(t, cs, mcptest.FixtureCall{Tool: "crash", Want: mcptest.Blocks(mcptest.TextBlock("crashing"))})
	waitFor(t, crashed, "OnCrash")
}

func TestFixtureCrashChildExits7(t *testing.T) {
	cs, stderr := connectChild(t, nil, "fixture")
	mcptest.CheckCall(t, cs, mcptest.FixtureCall{Tool: "add", Args: map[string]any{"a": 2, "b": 3}, Want: mcptest.Blocks(mcptest.TextBlock("5"))})
	mcptest.CheckCall(t, cs, mcptest.FixtureCall{Tool: "crash", Want: mcptest.Blocks(mcptest.TextBlock("crashing"))})
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
	mcptest.CheckCall(t, cs, mcptest.FixtureCall{Tool: "direct", Want: mcptest.Blocks(mcptest.TextBlock("runtime tool direct"))})
}
