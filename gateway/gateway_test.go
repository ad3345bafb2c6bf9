package gateway

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// twoBackends is a registry filled by two fixture servers whose raw tool
// names all collide (serverNames a and b), and a gateway in front of it.
func twoBackends(t *testing.T, opts Options) (*tool.Registry, *Gateway, map[string]*backend) {
	t.Helper()
	reg := tool.NewRegistry()
	bs := map[string]*backend{
		"a": startBackend(t, reg, "a", mcppeer.FixtureOptions{}),
		"b": startBackend(t, reg, "b", mcppeer.FixtureOptions{}),
	}
	return reg, newGateway(t, reg, opts), bs
}

func TestListsEveryRegistryToolInOrder(t *testing.T) {
	reg, g, _ := twoBackends(t, Options{})
	c := connectInMemory(t, g)

	want := publicNames([]string{"a", "b"}, mcppeer.FixtureTools())
	if diff := cmp.Diff(want, c.names(t)); diff != "" {
		t.Fatalf("tools/list names (-want +got):\n%s", diff)
	}

	// Descriptions and schemas are the registry's.
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	for tl, err := range c.session.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		def, ok := reg.Get(tl.Name)
		if !ok {
			t.Fatalf("listed %q is not in the registry", tl.Name)
		}
		if tl.Description != def.Description {
			t.Errorf("%s: description %q, want %q", tl.Name, tl.Description, def.Description)
		}
		if diff := cmp.Diff(decode(t, def.InputSchema), remarshal(t, tl.InputSchema)); diff != "" {
			t.Errorf("%s: input schema (-registry +listed):\n%s", tl.Name, diff)
		}
		if len(def.OutputSchema) == 0 {
			if tl.OutputSchema != nil {
				t.Errorf("%s: output schema %v listed, the registry has none", tl.Name, tl.OutputSchema)
			}
		} else if diff := cmp.Diff(decode(t, def.OutputSchema), remarshal(t, tl.OutputSchema)); diff != "" {
			t.Errorf("%s: output schema (-registry +listed):\n%s", tl.Name, diff)
		}
	}
}

func TestCallsReachTheRightBackend(t *testing.T) {
	_, g, bs := twoBackends(t, Options{})
	// Tell the backends apart: b gets a tool a lacks.
	mcppeer.AddRuntimeTool(bs["b"].fixture, "only_b")
	c := connectInMemory(t, g)
	waitFor(t, "mcp__b__only_b listed", func() bool { return slices.Contains(c.names(t), "mcp__b__only_b") })

	tests := []struct {
		name, args string
		want       []string
	}{
		{"mcp__a__greet", `{"name":"Ada"}`, []string{"Hello, Ada!"}},
		{"mcp__b__greet", `{"name":"Bob"}`, []string{"Hello, Bob!"}},
		{"mcp__a__add", `{"a":2,"b":3}`, []string{"5"}},
		{mcpclient.PublicToolName("b", "admin.reset"), `{}`, []string{"reset done"}},
		{"mcp__b__only_b", ``, []string{"runtime tool only_b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := c.call(t, tt.name, tt.args)
			if res.IsError {
				t.Fatalf("isError: %v", texts(res))
			}
			if diff := cmp.Diff(tt.want, texts(res)); diff != "" {
				t.Errorf("texts (-want +got):\n%s", diff)
			}
		})
	}
	if slices.Contains(c.names(t), "mcp__a__only_b") {
		t.Error("a tool of b is listed under a")
	}
}

func TestResultsPassThrough(t *testing.T) {
	_, g, _ := twoBackends(t, Options{})
	c := connectInMemory(t, g)
	png, err := base64.StdEncoding.DecodeString(mcppeer.TinyPNG)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("image", func(t *testing.T) {
		res := c.call(t, "mcp__a__image", `{}`)
		want := []mcp.Content{
			&mcp.TextContent{Text: "Here is an image:"},
			&mcp.ImageContent{Data: png, MIMEType: "image/png"},
			&mcp.TextContent{Text: "End of image."},
		}
		if diff := cmp.Diff(want, res.Content); diff != "" || res.IsError {
			t.Errorf("isError=%v, content (-want +got):\n%s", res.IsError, diff)
		}
	})
	t.Run("structured", func(t *testing.T) {
		res := c.call(t, "mcp__b__structured", `{}`)
		if diff := cmp.Diff(map[string]any{"answer": float64(42)}, res.StructuredContent); diff != "" || res.IsError {
			t.Errorf("isError=%v, structuredContent (-want +got):\n%s", res.IsError, diff)
		}
		if diff := cmp.Diff([]string{"42"}, texts(res)); diff != "" {
			t.Errorf("texts (-want +got):\n%s", diff)
		}
	})
	t.Run("isError from the backend", func(t *testing.T) {
		res := c.call(t, "mcp__a__fail", `{}`)
		if !res.IsError {
			t.Error("isError lost")
		}
		if diff := cmp.Diff([]string{"Something went wrong"}, texts(res)); diff != "" {
			t.Errorf("texts (-want +got):\n%s", diff)
		}
	})
	t.Run("failure in the bridge", func(t *testing.T) {
		res := c.call(t, "mcp__a__badstructured", `{}`)
		got := strings.Join(texts(res), "\n")
		if !res.IsError || !strings.HasPrefix(got, `Error: tool "mcp__a__badstructured" returned invalid output: structuredContent.answer`) {
			t.Errorf("isError=%v, text %q", res.IsError, got)
		}
	})
	t.Run("unknown tool", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		_, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__c__greet"})
		var wire *jsonrpc.Error
		if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams || !strings.Contains(wire.Message, `unknown tool "mcp__c__greet"`) {
			t.Errorf("error = %v, want JSON-RPC %d unknown tool", err, jsonrpc.CodeInvalidParams)
		}
	})
}

func TestCancellationAndProgressReachTheBackend(t *testing.T) {
	for _, version := range []string{"", "2025-11-25"} { // the SDK's path, the take
		t.Run("version "+version, func(t *testing.T) { cancellationAndProgressReachTheBackend(t, version) })
	}
}

func cancellationAndProgressReachTheBackend(t *testing.T, version string) {
	_, g, bs := twoBackends(t, Options{})
	viaSDK := sdkCalls(g)
	c := connectInMemoryAt(t, g, version)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	params := &mcp.CallToolParams{Name: "mcp__b__slow", Arguments: json.RawMessage(`{"ms":600000}`)}
	params.SetProgressToken("tok-1")
	errc := make(chan error, 1)
	go func() {
		_, err := c.session.CallTool(ctx, params)
		errc <- err
	}()
	// The fixture reports "started" once the call is in: the backend's
	// progress reached the client, with the client's own token.
	p := waitSignal(t, c.progress, "progress from the backend")
	if p.Message != "started" || p.ProgressToken != "tok-1" || p.Total != 600000 {
		t.Errorf("progress = %+v, want message started, token tok-1, total 600000", p)
	}
	cancel()
	waitSignal(t, bs["b"].cancelled, "the backend seeing the cancellation")
	if err := waitSignal(t, errc, "CallTool to return"); !errors.Is(err, context.Canceled) {
		t.Errorf("CallTool error = %v, want context.Canceled", err)
	}
	select {
	case <-bs["a"].cancelled:
		t.Error("backend a saw a cancellation")
	default:
	}
	if taken := viaSDK.Load() == 0; taken != (version != "") {
		t.Errorf("the take answered the call: %v, want %v", taken, version != "")
	}
}

func TestListChangedFollowsTheRegistry(t *testing.T) {
	_, g, _ := twoBackends(t, Options{})
	c := connectInMemory(t, g)
	// A backend that adds a tool at runtime: the backend notifies the
	// bridge, the bridge re-syncs the registry, the gateway tells clients.
	if res := c.call(t, "mcp__a__add_tool", `{"name":"late"}`); res.IsError {
		t.Fatalf("add_tool: %v", texts(res))
	}
	waitSignal(t, c.changed, "notifications/tools/list_changed")
	waitFor(t, "mcp__a__late listed", func() bool { return slices.Contains(c.names(t), "mcp__a__late") })
	if diff := cmp.Diff([]string{"runtime tool late"}, texts(c.call(t, "mcp__a__late", `{}`))); diff != "" {
		t.Errorf("new tool's texts (-want +got):\n%s", diff)
	}

	if res := c.call(t, "mcp__a__remove_tool", `{"name":"late"}`); res.IsError {
		t.Fatalf("remove_tool: %v", texts(res))
	}
	waitFor(t, "mcp__a__late gone", func() bool { return !slices.Contains(c.names(t), "mcp__a__late") })
}

// decode parses JSON for comparison.
func decode(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return v
}

// remarshal turns an SDK-decoded value back into plain JSON values.
func remarshal(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, b)
}

// Faults behind the gateway are clear isError results, and the gateway
// keeps serving: a backend that dies mid-call, a backend removed (a config
// edit) while a client calls it.
func TestBackendFaults(t *testing.T) {
	t.Run("backend dies", func(t *testing.T) {
		reg := tool.NewRegistry()
		a := startBackend(t, reg, "a", mcppeer.FixtureOptions{})
		startBackend(t, reg, "b", mcppeer.FixtureOptions{})
		c := connectInMemory(t, newGateway(t, reg, Options{}))
		res := slowCallUntil(t, c, a.kill)
		got := strings.Join(texts(res), "\n")
		if !res.IsError || !strings.HasPrefix(got, `Error: server "a" connection lost during the call`) {
			t.Errorf("call when its backend died: isError %v, %q", res.IsError, got)
		}
		if diff := cmp.Diff([]string{"Hello, B!"}, texts(c.call(t, "mcp__b__greet", `{"name":"B"}`))); diff != "" {
			t.Errorf("the other backend after the fault (-want +got):\n%s", diff)
		}
	})
	t.Run("backend removed", func(t *testing.T) {
		reg := tool.NewRegistry()
		a := startBackend(t, reg, "a", mcppeer.FixtureOptions{})
		startBackend(t, reg, "b", mcppeer.FixtureOptions{})
		c := connectInMemory(t, newGateway(t, reg, Options{}))
		res := slowCallUntil(t, c, func() { go a.client.Close() })
		got := strings.Join(texts(res), "\n")
		if !res.IsError || !strings.HasPrefix(got, `Error: server "a" is closing`) {
			t.Errorf("call when its backend was removed: isError %v, %q", res.IsError, got)
		}
		waitSignal(t, c.changed, "list_changed after the removal")
		waitFor(t, "a's tools gone", func() bool {
			return !slices.ContainsFunc(c.names(t), func(n string) bool { return strings.HasPrefix(n, "mcp__a__") })
		})
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if _, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__greet"}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Errorf("calling a removed tool: %v, want unknown tool", err)
		}
		if diff := cmp.Diff([]string{"Hello, B!"}, texts(c.call(t, "mcp__b__greet", `{"name":"B"}`))); diff != "" {
			t.Errorf("the other backend after the removal (-want +got):\n%s", diff)
		}
	})
}
