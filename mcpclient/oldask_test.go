package mcpclient

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/tool"
)

// A go-sdk server that elicits mid-call, reached on 2026-07-28 (stateless
// HTTP), fails the call; the message names the entry's protocolVersion
// fix, as a tool error or a JSON-RPC error alike. Pinned to 2025-11-25,
// the same server asks and completes.
func TestOldAskOnNewProtocol(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "old", Version: "0"}, nil)
	asking := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "hi", RequestedSchema: map[string]any{"type": "object"}})
		if err != nil {
			if req.Params.Name == "soft" {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
			}
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "asked: " + res.Action}}}, nil
	}
	srv.AddTool(&mcp.Tool{Name: "hard", InputSchema: json.RawMessage(`{"type":"object"}`)}, asking)
	srv.AddTool(&mcp.Tool{Name: "soft", InputSchema: json.RawMessage(`{"type":"object"}`)}, asking)
	ctx := tool.WithAsk(context.Background(), func(context.Context, tool.Ask) (json.RawMessage, error) {
		return json.RawMessage(`{"action":"decline"}`), nil
	})
	hint := `(server "old" asked its client mid-call the 2025-11-25 way, which protocol 2026-07-28 does not allow: set protocolVersion: "2025-11-25" on its entry)`

	hs := mcptest.NewHTTPServer(t, srv, mcptest.HTTPOptions{Stateless: true})
	h := mustStart(t, Config{ServerName: "old", Transport: TransportStreamableHTTP, URL: hs.URL}, Options{Elicit: true})
	for _, name := range []string{"mcp__old__hard", "mcp__old__soft"} {
		res, _ := h.reg.Execute(ctx, name, json.RawMessage(`{}`))
		if !res.IsError || !strings.Contains(res.Text(), "elicitation/create") || !strings.HasSuffix(res.Text(), hint) {
			t.Errorf("%s on 2026-07-28: %q", name, res.Text())
		}
	}

	stateful := mcptest.NewHTTPServer(t, srv, mcptest.HTTPOptions{})
	h = mustStart(t, Config{ServerName: "old", Transport: TransportStreamableHTTP, URL: stateful.URL, ProtocolVersion: "2025-11-25"}, Options{Elicit: true})
	if res, _ := h.reg.Execute(ctx, "mcp__old__hard", json.RawMessage(`{}`)); res.IsError || res.Text() != "asked: decline" {
		t.Errorf("pinned to 2025-11-25: %q", res.Text())
	}
}

// A server that asks again after every answer (by input-required results,
// protocol 2026-07-28) fails the call with the SDK's give-up, and the
// message says what happened: the client declined every time.
func TestInsistingServer(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "insist", Version: "0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "name", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if res, ok := req.Params.InputResponses["name"].(*mcp.ElicitResult); ok && res.Action == "accept" {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "thanks"}}}, nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{Message: "name?", RequestedSchema: map[string]any{"type": "object"}}}}, nil
		})
	cfg := stdioConfig("insist")
	cfg.ProtocolVersion = "2026-07-28"
	h := mustStart(t, cfg, Options{Elicit: true, NewTransport: inMemory(t, srv)})
	ctx := tool.WithAsk(context.Background(), func(context.Context, tool.Ask) (json.RawMessage, error) {
		return json.RawMessage(`{"action":"decline"}`), nil
	})
	res, _ := h.reg.Execute(ctx, "mcp__insist__name", json.RawMessage(`{}`))
	want := `server "insist" asked for input again after every answer: its client declined, could not be asked, or gave answers the server does not accept`
	if !res.IsError || !strings.Contains(res.Text(), "exceeded maximum retries") || !strings.Contains(res.Text(), want) {
		t.Errorf("got %q, want the give-up with %q", res.Text(), want)
	}
}
