//lint:file-ignore SA1019 a backend that needs sampling (deprecated by 2026-07-28, still carried) judges each request by it.

package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// refusingBackend registers, in reg, a backend whose tool "needs"
// answers every call with the JSON-RPC error -32021 (the client lacks a
// capability), as a 2026-07-28 server refuses a client that declared no
// sampling.
func refusingBackend(t *testing.T, reg *tool.Registry) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "strict", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "needs", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "this tool samples: declare sampling",
			Data: json.RawMessage(`{"requiredCapabilities":{"sampling":{}}}`)}
	})
	startMemBackend(t, reg, mcpclient.Config{ServerName: "strict", Transport: mcpclient.TransportStdio, Command: "unused"}, srv)
}

// A backend's JSON-RPC error answers the client's call as that error
// (code and message as sent), on stdio and on the stateless 2026-07-28
// wire (with the HTTP 400 the SDK's handler gives -32021), not as an
// isError result that hides the code from the client.
func TestBackendRPCErrorRelayed(t *testing.T) {
	reg := tool.NewRegistry()
	refusingBackend(t, reg)
	call := `{"name":"mcp__strict__needs","arguments":{},` + meta2026 + `}`
	stdio := connectRaw(t, newGateway(t, reg, Options{}))
	got := stdio.request("tools/call", call)
	if got.Error == nil || got.Error.Code != -32021 || !strings.Contains(got.Error.Message, "this tool samples: declare sampling") || len(got.Result) > 0 {
		t.Errorf("stdio: result %s, error %+v; want the backend's -32021", got.Result, got.Error)
	}

	opts := Options{Stateless: true}
	base := serveHTTP(t, newGateway(t, reg, opts), opts)
	c := &rawHTTP{t: t, endpoint: base + "/mcp", perRequest: true}
	m, resp := c.postWith(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+call+`}`, c.headersOf("tools/call", call))
	in := inBody(m)
	if resp.StatusCode != http.StatusBadRequest || in.Error == nil || in.Error.Code != -32021 || !strings.Contains(in.Error.Message, "this tool samples") {
		t.Errorf("stateless: HTTP %d, %+v; want 400 and the backend's -32021", resp.StatusCode, m)
	}
}

// elicitingBackend registers, in reg, a 2025-11-25 backend whose tool
// "ask" elicits a field p in the middle of the call and answers with the
// action and p.
func elicitingBackend(t *testing.T, reg *tool.Registry) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "p?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"p":{"type":"string"}}}`)})
		if err != nil {
			return nil, err
		}
		p, _ := res.Content["p"].(string)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action + " " + p}}}, nil
	})
	cfg := mcpclient.Config{ServerName: "b", Transport: mcpclient.TransportStdio, Command: "unused", ProtocolVersion: "2025-11-25"}
	startMemBackendWith(t, cfg, mcpclient.Options{Registry: reg, Elicit: true}, srv)
}

// A call left input-required by a client that never calls again blocks
// no other client's question: its backend call waits for that answer, so
// a 2025-11-25 backend's next question (which names no call) can only be
// the other call's, and reaches that client, instead of being declined
// as one that could belong to either.
func TestAbandonedRoundBlocksNoOtherQuestion(t *testing.T) {
	reg := tool.NewRegistry()
	elicitingBackend(t, reg)
	g := newGateway(t, reg, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	abandons := manualInMemory(t, g)
	first, err := abandons.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__b__ask", Arguments: map[string]any{}})
	if err != nil || !first.NeedsInput() {
		t.Fatalf("the first client's call: %+v, %v; want it input-required", first, err)
	}

	answers := mcp.NewClient(&mcp.Implementation{Name: "answers", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"p": "bob"}}, nil
		},
	})
	other, _ := connectClient(t, g, answers, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	res, err := other.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__b__ask", Arguments: map[string]any{}})
	if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "accept bob" {
		t.Errorf("the other client's call while the first is parked: %+v, %v; want its own answer, accept bob", res, err)
	}
}

// samplingBackend registers, in reg, a 2026-07-28 backend whose tool
// "needs" refuses with -32021 a request whose client declares no
// sampling, and otherwise answers with the client's name, as a server
// judges each request by its _meta (SEP-2575).
func samplingBackend(t *testing.T, reg *tool.Registry) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "judge", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "needs", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if caps := req.ClientCapabilities(); caps == nil || caps.Sampling == nil {
			return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "declare sampling"}
		}
		info, _ := req.Params.Meta[mcp.MetaKeyClientInfo].(map[string]any)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint("for ", info["name"])}}}, nil
	})
	cfg := mcpclient.Config{ServerName: "judge", Transport: mcpclient.TransportStdio, Command: "unused", AllowSampling: true}
	c := startMemBackendWith(t, cfg, mcpclient.Options{Registry: reg, Elicit: true, Sample: true}, srv)
	if v := c.Status().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("backend negotiated %q, want 2026-07-28", v)
	}
}

// A 2026-07-28 request's own clientCapabilities and clientInfo reach the
// backend, not the gateway's: a caller that declares no sampling is
// refused by a backend whose tool needs it (the backend's -32021, with
// HTTP 400), although the gateway itself may sample for it; one that
// declares sampling is served, and the backend sees its name.
func TestCallerCapabilitiesReachBackend(t *testing.T) {
	reg := tool.NewRegistry()
	samplingBackend(t, reg)
	opts := Options{Stateless: true}
	base := serveHTTP(t, newGateway(t, reg, opts), opts)
	c := &rawHTTP{t: t, endpoint: base + "/mcp", perRequest: true}
	callAs := func(caps string) (wireMessage, *http.Response) {
		params := `{"name":"mcp__judge__needs","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
			`"io.modelcontextprotocol/clientInfo":{"name":"caller-7","version":"1"},"io.modelcontextprotocol/clientCapabilities":` + caps + `}}`
		return c.postWith(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+params+`}`, c.headersOf("tools/call", params))
	}
	m, resp := callAs(`{}`)
	if in := inBody(m); resp.StatusCode != http.StatusBadRequest || in.Error == nil || in.Error.Code != -32021 {
		t.Errorf("a caller without sampling: HTTP %d, %+v; want the backend's -32021 with 400", resp.StatusCode, m)
	}
	m, _ = callAs(`{"sampling":{}}`)
	if m.Error != nil || !strings.Contains(string(m.Result), "for caller-7") {
		t.Errorf("a caller with sampling: %s %+v; want the backend to see caller-7", m.Result, m.Error)
	}
}

// A backend written for 2025-11-25 that elicits mid-call on a 2026-07-28
// session fails the call with a JSON-RPC error: the gateway's client gets
// that error, its message ending with the fix the direct CLI names (the
// entry's protocolVersion).
func TestOldAskFixReachesClient(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "old", Version: "0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "hard", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if _, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "hi", RequestedSchema: map[string]any{"type": "object"}}); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{}, nil
	})
	hs := mcptest.NewHTTPServer(t, srv, mcptest.HTTPOptions{Stateless: true})
	reg := tool.NewRegistry()
	startClient(t, mcpclient.Config{ServerName: "old", Transport: mcpclient.TransportStreamableHTTP, URL: hs.URL}, mcpclient.Options{Registry: reg, Elicit: true})
	got := connectRaw(t, newGateway(t, reg, Options{})).request("tools/call", `{"name":"mcp__old__hard","arguments":{}}`)
	if got.Error == nil || !strings.HasSuffix(got.Error.Message, `set protocolVersion: "2025-11-25" on its entry)`) {
		t.Errorf("result %s, error %+v; want the backend's error with the fix", got.Result, got.Error)
	}
}
