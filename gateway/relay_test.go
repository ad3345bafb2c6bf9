package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

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

