//lint:file-ignore SA1019 sampling is deprecated as of MCP 2026-07-28 but carried by the gateway; the test samples the 2025-11-25 way.

package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// exchange sends line and returns every line the gateway sends until the
// response with id, that response included.
func (c *rawClient) exchange(line, id string) []string {
	c.t.Helper()
	c.send(line)
	var out []string
	for {
		got := waitSignal(c.t, c.lines, "the response to "+line)
		out = append(out, string(got))
		var m wireMessage
		if err := json.Unmarshal(got, &m); err != nil {
			c.t.Fatalf("gateway sent invalid JSON %q: %v", got, err)
		}
		if string(m.ID) == id && m.Method == "" {
			return out
		}
	}
}

// The take answers tools/call with the bytes the SDK's path sends:
// the same lines (progress notifications, then the response) for Go tools
// and MCP backends, results the SDK cannot decode, HTML characters,
// arguments as the client wrote them, errors; and it does answer them.
func TestTakenSameBytes(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(
		goTool("html", func(context.Context, json.RawMessage) (tool.Output, error) {
			return tool.Output{Content: []tool.Content{tool.Text("<b>&amp;</b>\u2028")}, Value: json.RawMessage(`{"h" : "<i>&</i>\u2028", "n":1.50}`)}, nil
		}),
		goTool("echo", func(_ context.Context, args json.RawMessage) (tool.Output, error) {
			return tool.Output{Content: []tool.Content{tool.Text(string(args))}}, nil
		}),
		goTool("fail", func(context.Context, json.RawMessage) (tool.Output, error) {
			return tool.Output{}, errors.New("it <failed>")
		}),
	); err != nil {
		t.Fatal(err)
	}
	startRawBackend(t, reg, "r", mcppeer.RawScript{
		Pages: []mcppeer.RawPage{{Tools: []json.RawMessage{mcppeer.RawTool("odd", ""), mcppeer.RawTool("legacy", "")}}},
		Results: map[string]json.RawMessage{
			"odd":    json.RawMessage(`{"isError":true,"content":[{"type":"text","text":"a <b>", "x-extra":{"k" : 1}},{"type":"video","uri":"x"},42],"structuredContent":{"n":12345678901234567890, "s":"&"}}`),
			"legacy": json.RawMessage(`{"toolResult":{"x":"<1>"}}`),
		},
	})
	stepsBackend(t, reg)

	fast, sdk := newGateway(t, reg, Options{}), newGateway(t, reg, Options{})
	fastSDK, sdkSDK := sdkCalls(fast), sdkCalls(sdk)
	fc, sc := connectRaw(t, fast), connectRawSDK(t, sdk)

	calls := []string{
		`{"name":"html","arguments":{}}`,
		`{"name":"echo","arguments":{ "x" :  "<y>" , "n" : 1.50, "u":"\u00e9" }}`,
		`{"name":"echo"}`,
		`{"name":"fail","arguments":{}}`,
		`{"name":"mcp__r__odd","arguments":{}}`,
		`{"name":"mcp__r__legacy"}`,
		`{"name":"mcp__steps__steps","arguments":{},"_meta":{"progressToken":"p-1"}}`,
		`{"name":"mcp__steps__steps","_meta":{"progressToken":7,"other":{"a":[1]}}}`,
		`{"name":"nope","arguments":{}}`,              // unknown: the SDK answers on both
		`{"name":"ec\u0068o","arguments":{"e":true}}`, // escaped: the SDK reads it on both
	}
	for i, params := range calls {
		id := `"c` + string(rune('a'+i)) + `"`
		line := callLine(id, params)
		want, got := sc.exchange(line, id), fc.exchange(line, id)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: lines differ (-SDK path +take):\n%s", params, diff)
		}
	}
	if n := fastSDK.Load(); n != 2 {
		t.Errorf("the SDK's session read %d calls, want the 2 the take leaves it", n)
	}
	if n := sdkSDK.Load(); n != int64(len(calls)) {
		t.Errorf("the SDK's session read %d calls of the SDK-only session, want %d", n, len(calls))
	}
}

// A backend's elicitation and sampling in the middle of a taken call
// reach the client that made it, through its session, and their answers
// come back to the backend (the defaults of its form filled in).
func TestTakenAsksTheClient(t *testing.T) {
	reg := tool.NewRegistry()
	startMemBackendWith(t, mcpclient.Config{ServerName: "asker", Transport: mcpclient.TransportStdio, Command: "unused", ProtocolVersion: "2025-11-25", AllowSampling: true},
		mcpclient.Options{Registry: reg, Elicit: true, Sample: true}, mcppeer.Asker())
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	g := newGateway(t, reg, Options{})
	viaSDK := sdkCalls(g)
	client := mcp.NewClient(&mcp.Implementation{Name: "asked", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "size": "l"}}, nil
		},
		CreateMessageWithToolsHandler: func(_ context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			return &mcp.CreateMessageWithToolsResult{Model: "m", StopReason: "endTurn", Role: "assistant",
				Content: []mcp.Content{&mcp.TextContent{Text: "asked " + strings.TrimSpace(req.Params.SystemPrompt)}}}, nil
		},
	})
	cs, _ := connectClient(t, g, client, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	for name, want := range map[string]string{
		"mcp__asker__order":   `accept {"gift":false,"name":"Ada","quantity":1,"size":"l"}`,
		"mcp__asker__weather": "model m (endTurn): asked You answer briefly.",
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{"city": "Oslo"}})
		if err != nil || res.IsError || len(texts(res)) != 1 || texts(res)[0] != want {
			t.Errorf("%s: %q (isError %v), %v; want %q", name, texts(res), res.IsError, err, want)
		}
	}
	if n := viaSDK.Load(); n != 0 {
		t.Errorf("the SDK's session read %d calls, want none", n)
	}
}

// A call that arrives before the backends are ready waits for them (the
// SDK's path, which brings the tool list up to date first) and finds a
// tool registered meanwhile; once ready, calls take the take.
func TestTakenWaitsForReady(t *testing.T) {
	reg := tool.NewRegistry()
	ready := make(chan struct{})
	g := newGateway(t, reg, Options{Ready: ready})
	viaSDK := sdkCalls(g)
	c := connectRaw(t, g)
	c.send(callLine(`"early"`, `{"name":"late","arguments":{}}`))
	select {
	case line := <-c.lines:
		t.Fatalf("answered before ready: %s", line)
	case <-time.After(50 * time.Millisecond): // a bound on a negative; the positive below needs no timing
	}
	if _, err := reg.Register(goTool("late", textBody("ok"))); err != nil {
		t.Fatal(err)
	}
	close(ready)
	for _, id := range []string{`"early"`, `"after"`} {
		if id == `"after"` {
			c.send(callLine(id, `{"name":"late","arguments":{}}`))
		}
		if res := c.response(id); res.Error != nil || !strings.Contains(string(res.Result), `"text":"ok"`) {
			t.Errorf("call %s: %+v %s", id, res.Error, res.Result)
		}
	}
	if n := viaSDK.Load(); n != 1 {
		t.Errorf("the SDK's session read %d calls, want the one before ready", n)
	}
}

// callLine is a tools/call request line.
func callLine(id, params string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":` + params + `}`
}

// A request whose id is that of a request in flight, on either path, is
// not answered at all, as the SDK's session leaves one unanswered: an
// answer with that id would reach the client as the first request's,
// whose own answer it would then drop as unknown. The repeat runs
// nothing and holds no call slot, and the id serves again once the first
// request was answered.
func TestRepeatedIDUnansweredOnEitherPath(t *testing.T) {
	const (
		taken = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hold"}}`
		bySDK = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hold","x":1}}` // a member the take leaves to the SDK
	)
	repeats := map[string]string{
		"taken call": taken,
		"SDK's call": bySDK,
		"ping":       `{"jsonrpc":"2.0","id":7,"method":"ping"}`,
		"prompt":     `{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"none"}}`,
	}
	for firstName, first := range map[string]string{"taken": taken, "SDK's": bySDK} {
		for repeatName, repeat := range repeats {
			t.Run(firstName+" first, then "+repeatName, func(t *testing.T) {
				reg := tool.NewRegistry()
				var runs atomic.Int64
				entered, release := make(chan struct{}, 10), make(chan struct{})
				if _, err := reg.Register(goTool("hold", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
					n := runs.Add(1)
					entered <- struct{}{}
					select {
					case <-release:
					case <-ctx.Done():
						return tool.Output{}, ctx.Err()
					}
					return tool.Output{Content: []tool.Content{tool.Text(fmt.Sprintf("run %d", n))}}, nil
				})); err != nil {
					t.Fatal(err)
				}
				g := newGateway(t, reg, Options{MaxCallsPerSession: 2})
				viaSDK := sdkCalls(g)
				c := connectRaw(t, g)
				c.send(first)
				waitSignal(t, entered, "the first call to start")
				if sdkWay := viaSDK.Load() == 1; sdkWay != (first == bySDK) {
					t.Fatalf("the first call went the SDK's way: %v", sdkWay)
				}
				c.send(repeat)
				c.noAnswer("7", `{"jsonrpc":"2.0","id":"after","method":"ping"}`, "after")
				close(release)
				if res := c.response("7"); res.Error != nil || !strings.Contains(string(res.Result), `"text":"run 1"`) {
					t.Fatalf("the first call answered %s %+v, want its own result", res.Result, res.Error)
				}
				waitFor(t, "every call slot given back", func() bool {
					g.mu.Lock()
					defer g.mu.Unlock()
					return g.slotsTaken() == 0
				})
				c.noAnswer("7", `{"jsonrpc":"2.0","id":"later","method":"ping"}`, "later")
				if n := runs.Load(); n != 1 {
					t.Errorf("the tool ran %d times, want once", n)
				}
				if res := c.request("ping", `{}`); res.Error != nil {
					t.Fatalf("ping: %+v", res.Error)
				}
				if m := c.exchange(repeat, "7"); !strings.Contains(m[len(m)-1], `"id":7`) {
					t.Errorf("id 7 once answered: %s, want it served again", m)
				}
			})
		}
	}
}

// noAnswer sends line and waits for its response (id), failing on any
// response with id repeated meanwhile.
func (c *rawClient) noAnswer(repeated, line, id string) {
	c.t.Helper()
	for _, got := range c.exchange(line, `"`+id+`"`) {
		var m wireMessage
		json.Unmarshal([]byte(got), &m)
		if string(m.ID) == repeated && m.Method == "" {
			c.t.Errorf("the repeated id %s was answered: %s", repeated, got)
		}
	}
}
