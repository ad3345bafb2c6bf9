package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/serverwire"
	"github.com/mcpbridge/mcpbridge/tool"
)

// parentGate hides "hidden" and records each call it enters with the
// call that made it.
type parentGate struct {
	mu  sync.Mutex
	log []string
}

func (p *parentGate) Enter(ctx context.Context, c Call) (context.Context, func(Outcome) error, error) {
	parent := "-"
	if c.Parent != nil {
		parent = c.Parent.Tool
	}
	p.mu.Lock()
	p.log = append(p.log, c.Tool+" from "+parent)
	p.mu.Unlock()
	if c.Tool == "hidden" {
		return nil, nil, ErrHidden
	}
	return ctx, func(Outcome) error { return nil }, nil
}

// A served tool's calls for its caller (CallFor) take the gateway's call
// path: each enters the Gate with Parent set to the tool's call, a hidden
// or unserved tool is unknown, each takes a slot of the session, and
// ToolsFor lists what the caller is served. Outside a served call both
// refuse.
func TestCallForTakesTheCallPath(t *testing.T) {
	reg := tool.NewRegistry()
	var g *Gateway
	inner := func(ctx context.Context, names ...string) string {
		var out []string
		for _, name := range names {
			res, err := g.CallFor(ctx, name, json.RawMessage(`{}`))
			out = append(out, fmt.Sprintf("%s: %q %v", name, res.Text(), err))
		}
		return strings.Join(out, "\n")
	}
	tools := []tool.Tool{
		goTool("ok", textBody("fine")),
		goTool("hidden", textBody("secret")),
		goTool("outer", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
			listed, err := g.ToolsFor(ctx)
			var names []string
			for _, t := range listed {
				names = append(names, t.Name)
			}
			text := inner(ctx, "ok", "hidden", "nope", "middle") + fmt.Sprintf("\nlisted %v %v", names, err)
			return tool.Output{Content: []tool.Content{tool.Text(text)}}, nil
		}),
		goTool("middle", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
			return tool.Output{Content: []tool.Content{tool.Text(inner(ctx, "ok"))}}, nil
		}),
	}
	if _, err := reg.Register(tools...); err != nil {
		t.Fatal(err)
	}
	gate := &parentGate{}
	g = newGateway(t, reg, Options{Gate: gate, MaxCallsPerSession: 2})
	c := connectInMemory(t, g)

	got := strings.Join(texts(c.call(t, "outer", `{}`)), "\n")
	want := strings.Join([]string{
		`ok: "fine" <nil>`,
		`hidden: "" unknown tool "hidden"`,
		`nope: "" unknown tool "nope"`,
		// outer, middle and its call would be three slots, over the cap.
		`middle: "ok: \"\" too many tool calls in flight on this session (the gateway's limit is 2); retry when some have ended"` + " <nil>",
		`listed [hidden middle ok outer] <nil>`,
	}, "\n")
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("outer answered (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"outer from -", "ok from outer", "hidden from outer", "middle from outer"}, gate.log); d != "" {
		t.Errorf("the Gate saw (-want +got):\n%s", d)
	}
	if _, err := g.CallFor(t.Context(), "ok", nil); !errors.Is(err, errNoCaller) {
		t.Errorf("CallFor outside a call: %v", err)
	}
	if _, err := g.ToolsFor(t.Context()); !errors.Is(err, errNoCaller) {
		t.Errorf("ToolsFor outside a call: %v", err)
	}
}

// askingOuter registers "outer", a tool whose inner calls (CallFor of
// *g) are the asking tools' (askingTools), each line their answer.
func askingOuter(t *testing.T, reg *tool.Registry, g **Gateway) {
	t.Helper()
	askingTools(t, reg)
	if _, err := reg.Register(goTool("outer", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		var out []string
		for _, name := range []string{"elicit", "roots", "sample"} {
			res, err := (*g).CallFor(ctx, name, json.RawMessage(`{}`))
			out = append(out, fmt.Sprintf("%s: %s %v", name, res.Text(), err))
		}
		return tool.Output{Content: []tool.Content{tool.Text(strings.Join(out, "\n"))}}, nil
	})); err != nil {
		t.Fatal(err)
	}
}

// A served tool's inner calls ask their backends' questions of a client
// below 2026-07-28 in the middle of the call, as its direct calls do.
func TestCallForAsksLegacyClient(t *testing.T) {
	reg := tool.NewRegistry()
	var g *Gateway
	askingOuter(t, reg, &g)
	g = newGateway(t, reg, Options{})
	asked := &answering{}
	cs, _ := connectClient(t, g, asked.client(), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "outer"})
	if err != nil || len(res.Content) != 1 {
		t.Fatalf("outer: %+v, %v", res, err)
	}
	want := strings.Join([]string{
		`elicit: {"action":"accept"} <nil>`,
		`roots: {"roots":[]} <nil>`, // the go-sdk client's, which has none
		`sample: {"content":{"type":"text","text":"Paris"},"model":"m","role":"assistant"} <nil>`,
	}, "\n")
	if d := cmp.Diff(want, res.Content[0].(*mcp.TextContent).Text); d != "" {
		t.Errorf("the inner calls answered (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"elicitation/create", "sampling/createMessage"}, asked.take()); d != "" {
		t.Errorf("the client was asked (-want +got):\n%s", d)
	}
}

// A served tool's inner calls cannot park, so a 2026-07-28 client (asked
// only through input-required results) is not asked their backends'
// questions: an elicitation is declined and the rest refused with the
// SDK's words, whichever way its call came, beneath its POST's session
// (a client offering roots, sampling and elicitation) or through the
// SDK's (one offering more).
func TestCallForAsksNoPerRequestClient(t *testing.T) {
	reg := tool.NewRegistry()
	var g *Gateway
	askingOuter(t, reg, &g)
	g = newGateway(t, reg, Options{Stateless: true})
	sdk := sdkCalls(g)
	base := serveHTTP(t, g, Options{})
	refused := func(method string) string {
		return "failed: " + serverwire.PerRequestAskError(method, serverwire.PerRequestVersion).Error()
	}
	want := strings.Join([]string{`elicit: {"action":"decline"} <nil>`, "roots: " + refused("roots/list") + " <nil>", "sample: " + refused("sampling/createMessage") + " <nil>"}, "\n")
	for i, caps := range []string{`{"roots":{},"sampling":{},"elicitation":{}}`, `{"roots":{},"sampling":{},"elicitation":{},"experimental":{}}`} {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"outer","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":%s}}}`, i, caps)
		before := sdk.Load()
		_, got, _ := readStateless(t, base, body, false, perRequestHeaders("outer")...)
		if viaSDK := sdk.Load() != before; viaSDK != (i == 1) {
			t.Errorf("%s: through the SDK's session: %v", caps, viaSDK)
		}
		if strings.Contains(got, "\ndata: ") {
			got = lastData(got)
		}
		var msg struct {
			Result struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(got), &msg); err != nil || len(msg.Result.Content) != 1 {
			t.Fatalf("%s: answered %s (%v)", caps, got, err)
		}
		if d := cmp.Diff(want, msg.Result.Content[0].Text); d != "" {
			t.Errorf("%s: the inner calls answered (-want +got):\n%s", caps, d)
		}
	}
}

// Under raw names a program's call of a tool hidden from its caller is
// refused as one of a tool that does not exist, by the name the program
// used: the hidden tool's served (raw) name would tell the two apart.
func TestCallForHiddenUnderRawNames(t *testing.T) {
	reg := tool.NewRegistry()
	var g *Gateway
	secret := goTool("mcp__vault__drop", textBody("dropped"))
	secret.Origin = tool.Origin{Server: "vault", Name: "drop"}
	outer := goTool("outer", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		var out []string
		for _, name := range []string{"mcp__vault__drop", "mcp__vault__nosuch"} {
			_, err := g.CallFor(ctx, name, json.RawMessage(`{}`))
			out = append(out, fmt.Sprint(err))
		}
		return tool.Output{Content: []tool.Content{tool.Text(strings.Join(out, "\n"))}}, nil
	})
	if _, err := reg.Register(secret, outer); err != nil {
		t.Fatal(err)
	}
	g = newGateway(t, reg, Options{Gate: screenOut{"mcp__vault__drop"}, RawNames: true})
	got := strings.Join(texts(connectInMemory(t, g).call(t, "outer", `{}`)), "\n")
	hidden, unknown, _ := strings.Cut(got, "\n")
	if want := strings.ReplaceAll(unknown, "nosuch", "drop"); hidden != want {
		t.Errorf("a hidden tool's call: %q, want as an unknown one's: %q", hidden, want)
	}
}

// Holder names the caller of a served call as the per-identity limits
// count it, for code mode to share its programs' processes by: each
// identity its own, nobody outside a served call.
func TestHolderIsTheCallersIdentity(t *testing.T) {
	reg := tool.NewRegistry()
	var g *Gateway
	if _, err := reg.Register(goTool("who", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		return tool.Output{Content: []tool.Content{tool.Text("holder=" + g.Holder(ctx))}}, nil
	})); err != nil {
		t.Fatal(err)
	}
	opts := Options{Authenticate: aliceOrBob}
	g = newGateway(t, reg, opts)
	base := serveHTTP(t, g, opts)
	for token, want := range map[string]string{"alice-secret": "holder=identity alice", "bob-secret": "holder=identity bob"} {
		m := openRawHTTP(t, base, token).request("tools/call", `{"name":"who","arguments":{}}`)
		if m.Error != nil || !strings.Contains(string(m.Result), want) {
			t.Errorf("%s's call: %s %+v, want %q", token, m.Result, m.Error, want)
		}
	}
	if h := g.Holder(t.Context()); h != "" {
		t.Errorf("Holder outside a call = %q, want none", h)
	}
}
