//lint:file-ignore SA1019 the test servers use logging and sampling, deprecated as of MCP 2026-07-28 but carried by the bridge.

package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// askServer is a go-sdk server whose tools ask their client things:
// "elicit" (in the middle of the call on 2025-11-25, an input-required
// result on 2026-07-28), "sample", and "chatty", which logs three lines.
func askServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	schema := map[string]any{"type": "object", "properties": map[string]any{"pick": map[string]any{"type": "string"}}}
	titled := map[string]any{"type": "object", "properties": map[string]any{
		"pick": map[string]any{"type": "array", "items": map[string]any{"type": "string", "anyOf": []map[string]any{
			{"const": "a", "title": "A"}, {"const": "b", "title": "B"},
		}}},
	}}
	srv.AddTool(&mcp.Tool{Name: "elicit-titled", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "pick some", RequestedSchema: titled})
			if err != nil {
				return nil, err
			}
			return textResult(res.Action), nil
		})
	srv.AddTool(&mcp.Tool{Name: "elicit-ordered", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ordered := json.RawMessage(`{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"string"}}}`)
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "in order", RequestedSchema: ordered})
			if err != nil {
				return nil, err
			}
			return textResult(res.Action), nil
		})
	srv.AddTool(&mcp.Tool{Name: "elicit", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			params := &mcp.ElicitParams{Message: "pick one", RequestedSchema: schema}
			var res *mcp.ElicitResult
			if answer, ok := req.Params.InputResponses["pick"].(*mcp.ElicitResult); ok {
				res = answer
			} else if req.Session.InitializeParams().ProtocolVersion >= "2026-07-28" {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"pick": params}}, nil
			} else {
				var err error
				if res, err = req.Session.Elicit(ctx, params); err != nil {
					return nil, err
				}
			}
			return textResult(fmt.Sprintf("%s %v", res.Action, res.Content["pick"])), nil
		})
	srv.AddTool(&mcp.Tool{Name: "sample", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
			if err != nil {
				return nil, err
			}
			return textResult("model said " + res.Content.(*mcp.TextContent).Text), nil
		})
	srv.AddTool(&mcp.Tool{Name: "loud", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Logger: strings.Repeat("l", 1<<20), Data: strings.Repeat("d", 1<<20)})
			return textResult("done"), nil
		})
	srv.AddTool(&mcp.Tool{Name: "chatty", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for i := range 3 {
				_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Data: fmt.Sprint("line ", i)})
			}
			return textResult("done"), nil
		})
	return srv
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// answer is an AskFunc that records the methods it was asked (and by
// which server) and answers each with a fixed result.
type answer struct {
	mu    sync.Mutex
	asked []string
}

func (a *answer) ask(ctx context.Context, q tool.Ask) (json.RawMessage, error) {
	a.mu.Lock()
	a.asked = append(a.asked, q.Server+":"+q.Method)
	a.mu.Unlock()
	switch q.Method {
	case tool.AskElicit:
		if strings.Contains(string(q.Params), "anyOf") {
			return json.RawMessage(`{"action":"decline"}`), nil
		}
		return json.RawMessage(`{"action":"accept","content":{"pick":"b"}}`), nil
	default:
		return json.RawMessage(`{"role":"assistant","model":"m","content":{"type":"text","text":"hello"}}`), nil
	}
}

func (a *answer) methods() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return strings.Join(a.asked, ",") // "ask:elicitation/create"
}

func startAsker(t *testing.T, version string, allowSampling bool, opts Options) *harness {
	cfg := stdioConfig("ask")
	cfg.ProtocolVersion, cfg.AllowSampling = version, allowSampling
	opts.NewTransport = inMemory(t, askServer())
	return mustStart(t, cfg, opts)
}

// A server's elicitation goes to the consumer of the call that caused it
// (on 2026-07-28 as part of the call's result), else to Options.Ask.
func TestElicitationReachesTheCaller(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			fallback := &answer{}
			h := startAsker(t, version, false, Options{Elicit: true, Ask: fallback.ask})
			caller := &answer{}
			ctx := tool.WithAsk(context.Background(), caller.ask)
			if res, _ := h.reg.Execute(ctx, "mcp__ask__elicit", nil); res.Text() != "accept b" {
				t.Errorf("with a caller: %q", res.Text())
			}
			if res := h.call("mcp__ask__elicit", `{}`); res.Text() != "accept b" {
				t.Errorf("without a caller: %q", res.Text())
			}
			if caller.methods() != "ask:"+tool.AskElicit || fallback.methods() != "ask:"+tool.AskElicit {
				t.Errorf("caller asked %q, fallback asked %q; want one elicitation each", caller.methods(), fallback.methods())
			}
			if !h.log.HasRecord(slog.LevelInfo, "server request", "method", tool.AskElicit) {
				t.Errorf("the request was not logged:\n%s", h.log.Text())
			}
		})
	}
}

// A titled multi-select (SEP-1330), which the SDK's client-side schema
// check refuses, reaches the consumer as sent (protocol 2025-11-25; on
// 2026-07-28 the SDK checks it before any hook).
func TestElicitationTitledMultiSelect(t *testing.T) {
	a := &answer{}
	h := startAsker(t, "2025-11-25", false, Options{Elicit: true, Ask: a.ask})
	if res := h.call("mcp__ask__elicit-titled", `{}`); res.Text() != "decline" || a.methods() != "ask:"+tool.AskElicit {
		t.Errorf("result %q, asked %q; want the consumer's decline", res.Text(), a.methods())
	}
}

// A form reaches the consumer as the server wrote it: its fields in the
// server's order, which the SDK's decoding (a map) would sort.
func TestElicitationAsWritten(t *testing.T) {
	var mu sync.Mutex
	var got string
	h := startAsker(t, "2025-11-25", false, Options{Elicit: true, Ask: func(_ context.Context, q tool.Ask) (json.RawMessage, error) {
		mu.Lock()
		got = string(q.Params)
		mu.Unlock()
		return json.RawMessage(`{"action":"decline"}`), nil
	}})
	if res := h.call("mcp__ask__elicit-ordered", `{}`); res.Text() != "decline" {
		t.Fatalf("result %q", res.Text())
	}
	mu.Lock()
	defer mu.Unlock()
	if z, a := strings.Index(got, `"zeta"`), strings.Index(got, `"alpha"`); z < 0 || a < z {
		t.Errorf("the form's fields were reordered: %s", got)
	}
	var sent sentAsks
	sent.offered.Store(true)
	for i := range maxSentAsks + 1 {
		sent.note(tool.AskElicit, json.RawMessage(fmt.Sprintf(`{"mode":"form","message":"%d"}`, i)))
	}
	sent.note(tool.AskElicit, json.RawMessage(`[]`))
	if _, ok := sent.take(tool.AskElicit, []byte(`{"mode":"form","message":"0"}`)); ok || len(sent.list) != maxSentAsks {
		t.Errorf("%d requests kept, the oldest still there: %v", len(sent.list), ok)
	}
}

// Without anyone to ask, the server is told so; without Elicit, it is not
// offered elicitation at all.
func TestElicitationRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		opts Options
		want string
	}{
		{"no one to ask", Options{Elicit: true}, "no client is there to answer this request"},
		{"not offered", Options{}, "client does not support elicitation"},
		{"an answer that is no result", Options{Elicit: true, Ask: func(context.Context, tool.Ask) (json.RawMessage, error) {
			return json.RawMessage(`[1]`), nil
		}}, "the answer to elicitation/create is not a valid result"},
		{"a failed answer", Options{Elicit: true, Ask: func(context.Context, tool.Ask) (json.RawMessage, error) {
			return nil, errors.New("the person walked away")
		}}, "the person walked away"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := startAsker(t, "2025-11-25", false, c.opts)
			if res := h.call("mcp__ask__elicit", `{}`); !res.IsError || !strings.Contains(res.Text(), c.want) {
				t.Errorf("result %q, want an error with %q", res.Text(), c.want)
			}
		})
	}
}

// Sampling is offered only to entries with allowSampling, and only when the
// consumer answers it.
func TestSamplingNeedsAllowSampling(t *testing.T) {
	for _, c := range []struct {
		allow, sample bool
		want          string
	}{
		{true, true, "model said hello"},
		{false, true, "client does not support CreateMessage"},
		{true, false, "client does not support CreateMessage"},
	} {
		t.Run(fmt.Sprintf("allow=%v,sample=%v", c.allow, c.sample), func(t *testing.T) {
			a := &answer{}
			h := startAsker(t, "2025-11-25", c.allow, Options{Sample: c.sample, Ask: a.ask})
			if res := h.call("mcp__ask__sample", `{}`); !strings.Contains(res.Text(), c.want) {
				t.Errorf("result %q, want %q", res.Text(), c.want)
			}
		})
	}
}

// A call's log messages reach its consumer before its result, and the log
// at their level; the server is asked for them from logLevel up (by
// logging/setLevel, or per request on 2026-07-28).
func TestLogMessagesReachTheCaller(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			h := startAsker(t, version, false, Options{})
			var mu sync.Mutex
			var lines []string
			ctx := tool.WithLog(context.Background(), func(p json.RawMessage) {
				mu.Lock()
				lines = append(lines, string(p))
				mu.Unlock()
			})
			res, _ := h.reg.Execute(ctx, "mcp__ask__chatty", nil)
			mu.Lock()
			got := strings.Join(lines, "\n")
			mu.Unlock()
			if res.Text() != "done" || len(lines) != 3 || !strings.Contains(got, `"data":"line 2"`) {
				t.Errorf("result %q; the caller got %d lines before it:\n%s", res.Text(), len(lines), got)
			}
			if n := h.log.CountRecords(slog.LevelWarn, "server log message", "level", "warning"); n != 3 {
				t.Errorf("%d warning records, want 3:\n%s", n, h.log.Text())
			}
		})
	}
}

// A call's ended context, made only when a request of the server needs
// it, carries the call's values and is done when the call returns,
// whether it was made before or after.
func TestCallerEndedFollowsTheCall(t *testing.T) {
	type key struct{}
	var c callers
	for _, madeAfter := range []bool{false, true} {
		cl := c.enter(context.WithValue(context.Background(), key{}, "v"))
		if cl.Value(callerKey{}) != cl {
			t.Fatal("the call's context does not carry its caller")
		}
		var ended context.Context
		if !madeAfter {
			ended = c.ended(cl)
			if ended.Err() != nil {
				t.Fatal("ended is done before the call returned")
			}
		}
		c.leave(cl)
		if madeAfter {
			ended = c.ended(cl)
		}
		if ended.Err() == nil {
			t.Fatalf("ended (made after the call returned: %v) is not done", madeAfter)
		}
		if ended.Value(key{}) != "v" {
			t.Fatal("ended lost the call's values")
		}
		if c.ended(cl) != ended {
			t.Fatal("a second request of the call got another context")
		}
	}
}

// Calls leave in any order, and the ones left stay in flight.
func TestCallersLeaveInAnyOrder(t *testing.T) {
	var c callers
	a, b, d := c.enter(context.Background()), c.enter(context.Background()), c.enter(context.Background())
	c.leave(a)
	if !c.ambiguous() {
		t.Fatal("two calls in flight, not ambiguous")
	}
	c.leave(d)
	if c.sole() != b {
		t.Fatal("the call left in flight is not the sole one")
	}
	c.leave(b)
	if c.sole() != nil || c.ambiguous() {
		t.Fatal("a call is in flight after all left")
	}
}

// A log message of megabytes is cut before it is logged or passed on, and
// so is a progress message: a server could send dozens of each, queued
// per call.
func TestNoticesCutToTheirBound(t *testing.T) {
	h := startAsker(t, "2025-11-25", false, Options{})
	var got json.RawMessage
	ctx := tool.WithLog(context.Background(), func(p json.RawMessage) { got = p })
	if res, _ := h.reg.Execute(ctx, "mcp__ask__loud", nil); res.Text() != "done" {
		t.Fatalf("loud: %q", res.Text())
	}
	var m struct{ Level, Logger, Data string }
	if err := json.Unmarshal(got, &m); err != nil || len(got) > 3*maxNoticeBytes || m.Level != "warning" || !strings.HasSuffix(m.Data, "…") || !strings.HasSuffix(m.Logger, "…") {
		t.Errorf("the caller got %d bytes (%v): %.80s", len(got), err, got)
	}
	if strings.Contains(h.log.Text(), strings.Repeat("d", maxNoticeBytes+1)) {
		t.Error("the log holds the whole data")
	}
	var p progressRoutes
	var msg string
	_, done := p.add(func(n tool.Progress) { msg = n.Message })
	params, _ := json.Marshal(map[string]any{"progressToken": 1, "progress": 1, "message": strings.Repeat("é", 1<<20)})
	p.notified("notifications/progress", params)
	done()
	if len(msg) > maxNoticeBytes || !strings.HasSuffix(msg, "…") || !utf8.ValidString(msg) {
		t.Errorf("a progress message of 2 MiB reached its route as %d bytes", len(msg))
	}
}

// A log message small in data and logger but carrying a megabyte
// elsewhere (its _meta, or its level) reaches the caller and the log
// small: what is passed on is rebuilt from the fields the bridge reads,
// its level one of the protocol's.
func TestLogMessageRebuiltSmall(t *testing.T) {
	huge := strings.Repeat("m", 1<<20)
	srv := mcp.NewServer(&mcp.Implementation{Name: "loud", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "meta", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "error", Data: "d", Meta: mcp.Meta{"pad": huge}})
			return textResult("done"), nil
		})
	srv.AddTool(&mcp.Tool{Name: "level", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "error", Data: "d"})
			return textResult("done"), nil
		})
	// The SDK's server sends no level it does not know: one is put on the
	// wire past its check.
	srv.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.LoggingMessageParams); ok && p.Meta == nil {
				p.Level = mcp.LoggingLevel(huge)
			}
			return next(ctx, method, req)
		}
	})
	cfg := stdioConfig("loud")
	cfg.ProtocolVersion = "2025-11-25"
	h := mustStart(t, cfg, Options{NewTransport: inMemory(t, srv)})
	for _, name := range []string{"meta", "level"} {
		var got json.RawMessage
		ctx := tool.WithLog(context.Background(), func(p json.RawMessage) { got = p })
		if res, _ := h.reg.Execute(ctx, "mcp__loud__"+name, nil); res.Text() != "done" {
			t.Fatalf("%s: %q", name, res.Text())
		}
		var m struct{ Level, Data string }
		err := json.Unmarshal(got, &m)
		if _, known := logLevels[m.Level]; err != nil || len(got) > 1<<10 || m.Data != "d" || !known {
			t.Errorf("%s: the caller got %d bytes (%v): %.120s", name, len(got), err, got)
		}
	}
	if n := len(h.log.Text()); n > 64<<10 {
		t.Errorf("the log holds %d bytes for two small messages", n)
	}
}
