//lint:file-ignore SA1019 the test server asks for sampling and roots, deprecated as of MCP 2026-07-28 but carried by the bridge.

package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/tasks"
	"github.com/mcpbridge/mcpbridge/tool"
)

// roundRequests is one round of a server of protocol 2026-07-28 that asks
// for everything at once: an elicitation, a sampling request of the plain
// shape, and its client's roots.
func roundRequests() mcp.InputRequestMap {
	return mcp.InputRequestMap{
		"who": &mcp.ElicitParams{Message: "pick one", RequestedSchema: map[string]any{"type": "object",
			"properties": map[string]any{"pick": map[string]any{"type": "string"}}}},
		"model": &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}},
		"where": &mcp.ListRootsParams{},
	}
}

// roundSummary says what a round's answers were: the elicitation's
// action and pick, the model's text, and the roots' URIs.
func roundSummary(responses mcp.InputResponseMap) string {
	var parts []string
	if e, ok := responses["who"].(*mcp.ElicitResult); ok {
		parts = append(parts, fmt.Sprintf("%s %v", e.Action, e.Content["pick"]))
	}
	switch m := responses["model"].(type) {
	case *mcp.CreateMessageResult:
		parts = append(parts, m.Content.(*mcp.TextContent).Text)
	case *mcp.CreateMessageWithToolsResult:
		parts = append(parts, m.Content[0].(*mcp.TextContent).Text)
	}
	if r, ok := responses["where"].(*mcp.ListRootsResult); ok {
		var uris []string
		for _, root := range r.Roots {
			uris = append(uris, root.URI)
		}
		parts = append(parts, "roots "+strings.Join(uris, " "))
	}
	return strings.Join(parts, "|")
}

// rounder is a go-sdk server whose tool "round", prompt "asking" and
// resource "ask://r" each answer their first request with roundRequests,
// and the retry with roundSummary of its answers.
func rounder() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "rounder", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "round", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Params.InputResponses == nil {
				return &mcp.CallToolResult{InputRequests: roundRequests()}, nil
			}
			return textResult(roundSummary(req.Params.InputResponses)), nil
		})
	srv.AddTool(&mcp.Tool{Name: "flood", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			many := mcp.InputRequestMap{}
			for i := range tasks.MaxInputRequests + 1 {
				many[fmt.Sprint("q", i)] = &mcp.ListRootsParams{}
			}
			return &mcp.CallToolResult{InputRequests: many}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "shed", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{}, RequestState: "later"}, nil
		})
	srv.AddPrompt(&mcp.Prompt{Name: "asking"}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		if req.Params.InputResponses == nil {
			return &mcp.GetPromptResult{InputRequests: roundRequests()}, nil
		}
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: roundSummary(req.Params.InputResponses)}}}}, nil
	})
	srv.AddResource(&mcp.Resource{Name: "r", URI: "ask://r"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		if req.Params.InputResponses == nil {
			return &mcp.ReadResourceResult{InputRequests: roundRequests()}, nil
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "ask://r", Text: roundSummary(req.Params.InputResponses)}}}, nil
	})
	return srv
}

func startRounder(t *testing.T, configure func(*Config), opts Options) *harness {
	t.Helper()
	cfg := stdioConfig("rnd")
	cfg.ProtocolVersion = "2026-07-28"
	configure(&cfg)
	opts.NewTransport = inMemory(t, rounder())
	return mustStart(t, cfg, opts)
}

// A round of three requests is answered whole: the elicitation and the
// sampling request (of the plain shape) by the call's consumer, each
// alone, and the roots from the entry's roots; the tool, the prompt and
// the resource are each sent again with the answers under the server's
// keys.
func TestRoundAnsweredEachAlone(t *testing.T) {
	dir := t.TempDir()
	h := startRounder(t, func(c *Config) { c.AllowSampling, c.Roots = true, []string{dir} }, Options{Elicit: true, Sample: true})
	caller := &answer{}
	ctx := tool.WithAsk(context.Background(), caller.ask)
	want := "accept b|hello|roots file://" + dir
	if res, err := h.reg.Execute(ctx, "mcp__rnd__round", nil); err != nil || res.Text() != want {
		t.Errorf("tool: %q, %v; want %q", res.Text(), err, want)
	}
	if pr, err := h.reg.GetPrompt(ctx, "mcp__rnd__asking", nil); err != nil || len(pr.Messages) != 1 || len(pr.Messages[0].Content) != 1 || pr.Messages[0].Content[0].Text != want {
		t.Errorf("prompt: %+v, %v; want %q", pr, err, want)
	}
	if rr, err := h.reg.ReadResource(ctx, "rnd", "ask://r"); err != nil || len(rr.Content) != 1 || rr.Content[0].Text != want {
		t.Errorf("resource: %+v, %v; want %q", rr, err, want)
	}
	asked := strings.Split(caller.methods(), ",")
	slices.Sort(asked)
	if got := strings.Join(slices.Compact(asked), ","); got != "rnd:"+tool.AskElicit+",rnd:"+tool.AskSample {
		t.Errorf("the consumer was asked %q; want elicitation and sampling only (roots are the entry's)", caller.methods())
	}
}

// What the entry does not let through is refused, naming the request's
// key and why, whether the round is answered request by request or
// relayed whole: sampling without allowSampling, elicitation to a bridge
// whose consumer takes none.
func TestRoundRefusesWhatTheEntryForbids(t *testing.T) {
	relay := func(context.Context, map[string]tool.Ask) (map[string]json.RawMessage, error) {
		t.Error("a round with a forbidden request reached the consumer")
		return nil, nil
	}
	for _, c := range []struct {
		name   string
		elicit bool
		relay  bool
		want   string
	}{
		{"sampling, each alone", true, false, "allowSampling"},
		{"sampling, relayed", true, true, "allowSampling"},
		{"elicitation, each alone", false, false, "takes no elicitation"},
		{"elicitation, relayed", false, true, "takes no elicitation"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Only the one request is forbidden: sampling when elicitation
			// is taken, and elicitation when sampling is allowed.
			h := startRounder(t, func(cfg *Config) { cfg.AllowSampling = !c.elicit }, Options{Elicit: c.elicit, Sample: true})
			ctx := tool.WithAsk(context.Background(), (&answer{}).ask)
			if c.relay {
				ctx = tool.WithInputs(ctx, relay)
			}
			res, err := h.reg.Execute(ctx, "mcp__rnd__round", nil)
			if text := fmt.Sprint(res.Text(), err); !strings.Contains(text, c.want) || !strings.Contains(text, "input request") {
				t.Errorf("got %q, %v; want a refusal of the input request naming %q", res.Text(), err, c.want)
			}
		})
	}
}

// A consumer that takes rounds (a gateway) gets the round whole, under
// the server's keys, with roots among them only for roots: client; the
// entry's own roots answer otherwise. Its answers reach the server under
// the same keys.
func TestRoundRelayedWhole(t *testing.T) {
	for _, c := range []struct {
		name      string
		fromUser  bool
		wantKeys  string
		wantRoots string
	}{
		{"roots of the entry", false, "model,who", "roots file:///srv"},
		{"roots: client", true, "model,where,who", "roots file:///from/client"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := startRounder(t, func(cfg *Config) {
				cfg.AllowSampling = true
				if c.fromUser {
					cfg.RootsFromClient = true
				} else {
					cfg.Roots = []string{"/srv"}
				}
			}, Options{Elicit: true, Sample: true})
			var mu sync.Mutex
			var keys []string
			relay := func(_ context.Context, round map[string]tool.Ask) (map[string]json.RawMessage, error) {
				mu.Lock()
				defer mu.Unlock()
				out := map[string]json.RawMessage{}
				for k, a := range round {
					keys = append(keys, k)
					switch a.Method {
					case tool.AskElicit:
						out[k] = json.RawMessage(`{"action":"accept","content":{"pick":"c"}}`)
					case tool.AskSample:
						out[k] = json.RawMessage(`{"role":"assistant","model":"m","content":{"type":"text","text":"relayed"}}`)
					case tool.AskRoots:
						out[k] = json.RawMessage(`{"roots":[{"uri":"file:///from/client"}]}`)
					}
				}
				return out, nil
			}
			ctx := tool.WithInputs(tool.WithAsk(context.Background(), (&answer{}).ask), relay)
			want := "accept c|relayed|" + c.wantRoots
			if res, err := h.reg.Execute(ctx, "mcp__rnd__round", nil); err != nil || res.Text() != want {
				t.Errorf("got %q, %v; want %q", res.Text(), err, want)
			}
			slices.Sort(keys)
			if got := strings.Join(keys, ","); got != c.wantKeys {
				t.Errorf("the consumer was handed %q; want %q", got, c.wantKeys)
			}
		})
	}
}

// An answer missing from a relayed round is refused by name, not sent on
// as an empty answer.
func TestRoundRelayedAnswerMissing(t *testing.T) {
	h := startRounder(t, func(cfg *Config) { cfg.AllowSampling = true }, Options{Elicit: true, Sample: true})
	relay := func(context.Context, map[string]tool.Ask) (map[string]json.RawMessage, error) {
		return map[string]json.RawMessage{"who": json.RawMessage(`{"action":"decline"}`)}, nil
	}
	ctx := tool.WithInputs(context.Background(), relay)
	res, err := h.reg.Execute(ctx, "mcp__rnd__round", nil)
	if text := fmt.Sprint(res.Text(), err); !strings.Contains(text, `input request "model"`) || !strings.Contains(text, "no answer") {
		t.Errorf("got %q, %v; want the missing answer to \"model\" named", res.Text(), err)
	}
}

// A server that keeps answering input-required with nothing to answer
// (shedding load) gets an error after a few rounds, not a loop.
func TestRoundLoadSheddingBounded(t *testing.T) {
	h := startRounder(t, func(*Config) {}, Options{})
	res, err := h.reg.Execute(context.Background(), "mcp__rnd__shed", nil)
	if text := fmt.Sprint(res.Text(), err); !strings.Contains(text, "load-shedding retries (3)") {
		t.Errorf("got %q, %v; want the load-shedding bound", res.Text(), err)
	}
}

// A round asks at most as many questions as a task's may: one of more is
// refused whole, before anyone is asked, whether it would be answered
// question by question or relayed whole.
func TestRoundOfTooManyQuestionsRefused(t *testing.T) {
	h := startRounder(t, func(*Config) {}, Options{Elicit: true})
	caller := &answer{}
	for name, ctx := range map[string]context.Context{
		"each alone": tool.WithAsk(context.Background(), caller.ask),
		"relayed": tool.WithInputs(context.Background(), func(context.Context, map[string]tool.Ask) (map[string]json.RawMessage, error) {
			t.Error("a round of too many questions was relayed")
			return nil, nil
		}),
	} {
		res, _ := h.reg.Execute(ctx, "mcp__rnd__flood", nil)
		if want := fmt.Sprintf("asks %d questions in one round, more than the %d", tasks.MaxInputRequests+1, tasks.MaxInputRequests); !res.IsError || !strings.Contains(res.Text(), want) {
			t.Errorf("%s: %q, want it refused saying %q", name, res.Text(), want)
		}
	}
	if m := caller.methods(); m != "" {
		t.Errorf("the consumer was asked %q", m)
	}
}
