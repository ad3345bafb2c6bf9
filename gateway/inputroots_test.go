package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// A 2026-07-28 backend that asks for roots in an input-required result
// (the go-sdk everything-server's test_input_required_result_list_roots)
// gets the roots its entry says: with roots: client, those of the
// gateway's client that made the call, put to it as an input request;
// with roots: [paths], the entry's own, whatever the client offers. The
// gateway used to answer both from the entry (none for roots: client).
func TestInputRequiredRootsReachClient(t *testing.T) {
	server := buildEverythingServer(t)
	dir := t.TempDir()
	reg := tool.NewRegistry()
	for name, cfg := range map[string]mcpclient.Config{
		"client": {RootsFromClient: true},
		"paths":  {Roots: []string{dir}},
	} {
		cfg.ServerName, cfg.Transport, cfg.Command = name, mcpclient.TransportStdio, server
		startClient(t, cfg, mcpclient.Options{Registry: reg, Elicit: true})
	}
	base := serveHTTP(t, newGateway(t, reg, Options{Stateless: true}), Options{Stateless: true})

	a := &answering{}
	c := a.client()
	c.AddRoots(&mcp.Root{URI: "file:///clients/project", Name: "project"})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ProtocolVersion; got != "2026-07-28" {
		t.Fatalf("negotiated %q, want 2026-07-28", got)
	}
	own := (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
	for name, want := range map[string]string{
		"client": "Client exposed 1 root(s): file:///clients/project",
		"paths":  "Client exposed 1 root(s): " + own,
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__" + name + "__test_input_required_result_list_roots", Arguments: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := strings.Join(texts(res), "\n"); res.IsError || got != want {
			t.Errorf("roots of entry %q: got %q (isError %v), want %q", name, got, res.IsError, want)
		}
	}
}

// A 2026-07-28 backend's round of three questions (elicitation, sampling,
// roots) reaches a 2026-07-28 client in one input-required result, under
// the backend's own keys, and the client's answers under those keys
// complete the call: the gateway used to rename the keys (q1, …) and put
// one question per round.
func TestInputRequiredRoundRelayedAsSent(t *testing.T) {
	reg := tool.NewRegistry()
	cfg := mcpclient.Config{ServerName: "many", Transport: mcpclient.TransportStdio, Command: buildEverythingServer(t), AllowSampling: true, RootsFromClient: true}
	startClient(t, cfg, mcpclient.Options{Registry: reg, Elicit: true, Sample: true})
	base := serveHTTP(t, newGateway(t, reg, Options{Stateless: true}), Options{Stateless: true})

	c := mcp.NewClient(&mcp.Implementation{Name: "manual", Version: "1"}, &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Error("the client was asked in the middle of a call")
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			t.Error("the client was asked in the middle of a call")
			return nil, nil
		},
	})
	c.AddRoots(&mcp.Root{URI: "file:///clients/project"})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	const name = "mcp__many__test_input_required_result_multiple_inputs"
	first, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for key, req := range first.InputRequests {
		got[key] = fmt.Sprintf("%T", req)
	}
	want := map[string]string{"user_name": "*mcp.ElicitParams", "greeting": "*mcp.CreateMessageWithToolsParams", "client_roots": "*mcp.ListRootsParams"}
	if !first.NeedsInput() || !maps.Equal(got, want) || !strings.HasPrefix(first.RequestState, "mcpbridge.") {
		t.Fatalf("first round: input-required %v, requests %v, requestState %q; want the backend's three keys at once and the gateway's state", first.NeedsInput(), got, first.RequestState)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}, RequestState: first.RequestState,
		InputResponses: mcp.InputResponseMap{
			"user_name":    &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ada"}},
			"greeting":     &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "Paris"}},
			"client_roots": &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///clients/project"}}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if text := strings.Join(texts(res), "\n"); res.NeedsInput() || res.IsError || text != "Paris ada — 1 root(s) visible" {
		t.Errorf("after the answers: %q (input-required %v, isError %v), want the backend's result of all three", text, res.NeedsInput(), res.IsError)
	}
}
