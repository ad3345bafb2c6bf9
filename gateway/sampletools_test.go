//lint:file-ignore SA1019 sampling is deprecated as of MCP 2026-07-28 but carried by the gateway; the test samples with tools the 2025-11-25 way.
package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// toolSampler is a go-sdk server whose "plan" tool asks its client for a
// message with a tool the model may use (MCP 2025-11-25 sampling with
// tools), after checking that the client declared sampling.tools, and
// answers with what came back.
func toolSampler() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "sampler", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "plan"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		caps := req.Session.InitializeParams().Capabilities
		if caps == nil || caps.Sampling == nil || caps.Sampling.Tools == nil {
			return nil, nil, errors.New("the client did not declare sampling.tools")
		}
		res, err := req.Session.CreateMessageWithTools(ctx, &mcp.CreateMessageWithToolsParams{
			MaxTokens: 100,
			Messages:  []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: "Weather in Oslo?"}}}},
			Tools: []*mcp.Tool{{Name: "get_weather", Description: "The weather in a city.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}},
			ToolChoice: &mcp.ToolChoice{Mode: "required"},
		})
		if err != nil {
			return nil, nil, err
		}
		b, err := json.Marshal(res.Content)
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.StopReason + " " + string(b)}}}, nil, nil
	})
	return srv
}

// A backend's sampling request with tools reaches a gateway client that
// declares sampling.tools, tools and toolChoice included, and its tool_use
// answer goes back; a client that offers sampling without tools is never
// sent one, and the backend is told why.
func TestGatewaySamplingWithTools(t *testing.T) {
	reg := tool.NewRegistry()
	startMemBackendWith(t, mcpclient.Config{ServerName: "s", Transport: mcpclient.TransportStdio, Command: "unused", ProtocolVersion: "2025-11-25", AllowSampling: true},
		mcpclient.Options{Registry: reg, Sample: true}, toolSampler())
	g := newGateway(t, reg, Options{})
	connect := func(opts *mcp.ClientOptions) *mcp.ClientSession {
		cs, _ := connectClient(t, g, mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, opts), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		return cs
	}
	call := func(cs *mcp.ClientSession) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "mcp__s__plan", Arguments: map[string]any{}})
		if err != nil || len(texts(res)) != 1 {
			t.Fatalf("call: %v %+v", err, res)
		}
		return texts(res)[0], res.IsError
	}

	var asked string
	withTools := connect(&mcp.ClientOptions{CreateMessageWithToolsHandler: func(_ context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
		var names []string
		for _, tl := range req.Params.Tools {
			names = append(names, tl.Name)
		}
		asked = strings.Join(names, ",") + " " + req.Params.ToolChoice.Mode
		return &mcp.CreateMessageWithToolsResult{Model: "m", Role: "assistant", StopReason: "toolUse",
			Content: []mcp.Content{&mcp.ToolUseContent{ID: "u1", Name: "get_weather", Input: map[string]any{"city": "Oslo"}}}}, nil
	}})
	got, isErr := call(withTools)
	if want := `toolUse [{"type":"tool_use","id":"u1","name":"get_weather","input":{"city":"Oslo"}}]`; isErr || got != want {
		t.Errorf("with sampling.tools: %q (isError %v), want %q", got, isErr, want)
	}
	if asked != "get_weather required" {
		t.Errorf("the client was asked with tools and toolChoice %q", asked)
	}

	var plainAsked atomic.Int32
	plain := connect(&mcp.ClientOptions{CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		plainAsked.Add(1)
		return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "no tools here"}}, nil
	}})
	got, isErr = call(plain)
	if !isErr || !strings.Contains(got, "the gateway's client offers sampling without tools") || plainAsked.Load() != 0 {
		t.Errorf("without sampling.tools: %q (isError %v), client asked %d times; want an error naming sampling.tools, never asked", got, isErr, plainAsked.Load())
	}
}
