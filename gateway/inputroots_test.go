//lint:file-ignore SA1019 a backend asks for roots and sampling (deprecated by 2026-07-28, still carried) in its input-required results.

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
	cs := sdkOverHTTP(t, c, base)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
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

	cs := roundClient(t, base)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

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

// roundClient connects to base+"/mcp" as a 2026-07-28 client that
// offers elicitation, sampling and roots and answers input-required
// results itself (the SDK's multi round-trip middleware off): asked in
// the middle of a call, it fails t.
func roundClient(t *testing.T, base string) *mcp.ClientSession {
	t.Helper()
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
	return sdkOverHTTP(t, c, base)
}

// sdkOverHTTP connects c to the gateway at base+"/mcp" over Streamable
// HTTP, for the rest of the test.
func sdkOverHTTP(t *testing.T, c *mcp.Client, base string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// askingResources registers, in reg, a 2026-07-28 backend "docs" whose
// resource note://secret asks its client for a passphrase in an
// input-required result, and reads "opened with <passphrase>" once
// answered.
func askingResources(t *testing.T, reg *tool.Registry) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	srv.AddResource(&mcp.Resource{URI: "note://secret", Name: "secret"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		if res, ok := req.Params.InputResponses["passphrase"].(*mcp.ElicitResult); ok {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "note://secret", Text: fmt.Sprint("opened with ", res.Content["word"])}}}, nil
		}
		return &mcp.ReadResourceResult{InputRequests: mcp.InputRequestMap{"passphrase": &mcp.ElicitParams{Message: "Passphrase?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"word":{"type":"string"}}}`)}}}, nil
	})
	startMemBackendWith(t, mcpclient.Config{ServerName: "docs", Transport: mcpclient.TransportStdio, Command: "unused"},
		mcpclient.Options{Registry: reg, Elicit: true}, srv)
}

// A backend's input-required result of a prompts/get or resources/read
// reaches a 2026-07-28 client as one of a tools/call does: under the
// backend's key, with the gateway's requestState, which the client's
// request again brings back with its answer. The state is good for that
// request only: altered, or presented for another prompt, it is refused.
// The gateway used to relay input-required for tools/call alone: a
// prompts/get that asked failed.
func TestInputRequiredNonToolRequests(t *testing.T) {
	reg := tool.NewRegistry()
	startClient(t, mcpclient.Config{ServerName: "every", Transport: mcpclient.TransportStdio, Command: buildEverythingServer(t)},
		mcpclient.Options{Registry: reg, Elicit: true})
	askingResources(t, reg)
	base := serveHTTP(t, newGateway(t, reg, Options{Stateless: true}), Options{Stateless: true})
	cs := roundClient(t, base)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	const prompt = "mcp__every__test_input_required_result_prompt"
	first, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompt})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := first.InputRequests["user_context"].(*mcp.ElicitParams); !first.NeedsInput() || len(first.InputRequests) != 1 || !ok || !strings.HasPrefix(first.RequestState, "mcpbridge.") {
		t.Fatalf("prompts/get: got %+v, want the backend's user_context elicitation and the gateway's requestState", first)
	}
	answer := mcp.InputResponseMap{"user_context": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"context": "tests"}}}
	for what, params := range map[string]*mcp.GetPromptParams{
		"an altered state":     {Name: prompt, RequestState: first.RequestState + "x", InputResponses: answer},
		"the state of another": {Name: "mcp__every__test_simple_prompt", RequestState: first.RequestState, InputResponses: answer},
		"other arguments":      {Name: prompt, Arguments: map[string]string{"a": "b"}, RequestState: first.RequestState, InputResponses: answer},
		"a state never given":  {Name: prompt, RequestState: "mcpbridge.forged", InputResponses: answer},
	} {
		if _, err := cs.GetPrompt(ctx, params); err == nil || !strings.Contains(err.Error(), "requestState is not one") {
			t.Errorf("prompts/get with %s: got %v, want the requestState refused", what, err)
		}
	}
	done, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: prompt, RequestState: first.RequestState, InputResponses: answer})
	if err != nil {
		t.Fatal(err)
	}
	if done.NeedsInput() || len(done.Messages) != 1 || done.Messages[0].Content.(*mcp.TextContent).Text != "Context: tests" {
		t.Errorf("prompts/get answered: got %+v, want the backend's prompt with the answer", done)
	}

	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "note://secret"})
	if err != nil {
		t.Fatal(err)
	}
	if !read.NeedsInput() || read.InputRequests["passphrase"] == nil || !strings.HasPrefix(read.RequestState, "mcpbridge.") {
		t.Fatalf("resources/read: got %+v, want the backend's passphrase question and the gateway's requestState", read)
	}
	read, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "note://secret", RequestState: read.RequestState,
		InputResponses: mcp.InputResponseMap{"passphrase": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"word": "swordfish"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if read.NeedsInput() || len(read.Contents) != 1 || read.Contents[0].Text != "opened with swordfish" {
		t.Errorf("resources/read answered: got %+v, want the resource read with the answer", read)
	}
}
