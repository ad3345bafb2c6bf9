package sdkwire

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type askKey struct{}

// Assumption 20: on protocol 2026-07-28 a tool that needs input answers
// input-required; the client's middleware answers it through its
// elicitation handler, in the call's own context, and calls again; the
// capture passes the input-required round to the SDK and keeps the final
// result.
func TestContractMultiRoundTrip(t *testing.T) {
	srv := newServer(nil)
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if answer, ok := req.Params.InputResponses["name"].(*mcp.ElicitResult); ok {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + answer.Content["name"].(string)}}}, nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{
				Message:         "name?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}},
			}}}, nil
		})
	var askedIn any
	copts := &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		askedIn = ctx.Value(askKey{})
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
	}}
	table := NewTable(0)
	cs := connectInMemory(t, srv, copts, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"}, func(tr mcp.Transport) mcp.Transport {
		return &CaptureTransport{Transport: tr, Table: table}
	})
	slot := NewSlot(CapturedCall)
	ctx := context.WithValue(WithSlot(context.Background(), slot), askKey{}, "the call's")
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask"})
	table.Forget(slot)
	if !Captured(err) {
		t.Fatalf("CallTool: %v", err)
	}
	if askedIn != "the call's" {
		t.Errorf("the elicitation handler ran in context value %v, want the call's context", askedIn)
	}
	raw, ok := slot.Result()
	if !ok || !strings.Contains(string(raw), `"text":"hello Ada"`) || InputRequired(raw) {
		t.Errorf("captured %s (%v), want the final round's result", raw, ok)
	}
}

func TestInputRequired(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"resultType":"input_required","inputRequests":{}}`:    true,
		`{"resultType":"complete","content":[]}`:                false,
		`{"content":[{"type":"text","text":"input_required"}]}`: false,
		`not json "input_required"`:                             false,
		// resultType's name as the SDK's decoder matches it.
		`{"resultType":"complete","ResultType":"input_required"}`:              false,
		`{"resultType":"input_required","resultType":"complete"}`:              false,
		`{"resultType":"complete","content":[],"resultType":"input_required"}`: true,
	} {
		if got := InputRequired(json.RawMessage(raw)); got != want {
			t.Errorf("InputRequired(%s) = %v, want %v", raw, got, want)
		}
	}
}

// Assumption 32: a receiving middleware that answers a tools/call with
// InputRequiredResult reaches a 2026-07-28 client as an input-required
// result: without the multi round-trip middleware the client sees it as
// written (NeedsInput, the requests decoded, the requestState); with it,
// the client answers through its handler and calls again with the
// answers under the request's keys and the requestState, and a RawResult
// ends the call.
func TestContractInputRequiredResult(t *testing.T) {
	srv := newServer(nil)
	var again *mcp.CallToolParamsRaw
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
			if method != "tools/call" || !ok {
				return next(ctx, method, req)
			}
			if p.RequestState == "" {
				return InputRequiredResult(json.RawMessage(`{"q1":{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}}`), "state-1"), nil
			}
			again = p
			ss, _ := req.GetSession().(*mcp.ServerSession)
			return RawResult(ss, false, json.RawMessage(`[{"type":"text","text":"done"}]`), nil), nil
		}
	})
	answer := func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
	}
	v2026 := &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"}
	ctx := context.Background()

	manual := connectInMemory(t, srv, &mcp.ClientOptions{ElicitationHandler: answer, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}}, v2026, nil)
	res, err := manual.CallTool(ctx, &mcp.CallToolParams{Name: "echo"})
	if err != nil {
		t.Fatal(err)
	}
	p, ok := res.InputRequests["q1"].(*mcp.ElicitParams)
	if !res.NeedsInput() || res.RequestState != "state-1" || len(res.InputRequests) != 1 || !ok || p.Message != "name?" || len(res.Content) != 0 {
		t.Errorf("the client saw %+v, want the input-required result as written", res)
	}

	auto := connectInMemory(t, srv, &mcp.ClientOptions{ElicitationHandler: answer}, v2026, nil)
	res, err = auto.CallTool(ctx, &mcp.CallToolParams{Name: "echo"})
	if err != nil || res.NeedsInput() || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "done" {
		t.Fatalf("CallTool: %+v, %v; want the final result", res, err)
	}
	got, ok := again.InputResponses["q1"].(*mcp.ElicitResult)
	if again.RequestState != "state-1" || !ok || got.Action != "accept" || got.Content["name"] != "Ada" {
		t.Errorf("the call again carried %+v, want the answer under q1 and the requestState", again)
	}
}
