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
	} {
		if got := InputRequired(json.RawMessage(raw)); got != want {
			t.Errorf("InputRequired(%s) = %v, want %v", raw, got, want)
		}
	}
}
