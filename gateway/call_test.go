package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// Registry tools written in Go: their text content, their value as
// structuredContent when it is a JSON object, failures as isError; a
// source's wire result, when it has one, passed through.
func TestGoToolResults(t *testing.T) {
	reg := tool.NewRegistry()
	var gotArgs sync.Map
	output := func(out tool.Output, err error) tool.Func {
		return func(_ context.Context, args json.RawMessage) (tool.Output, error) {
			return out, err
		}
	}
	withSchema := func(tl tool.Tool) tool.Tool {
		tl.OutputSchema = json.RawMessage(`{"type":"object"}`)
		return tl
	}
	tools := []tool.Tool{
		goTool("text", textBody("hi")),
		goTool("args", func(_ context.Context, args json.RawMessage) (tool.Output, error) {
			gotArgs.Store(string(args), true)
			return tool.Output{Content: []tool.Content{tool.Text(string(args))}}, nil
		}),
		goTool("nil_content", output(tool.Output{}, nil)),
		withSchema(goTool("value_schema", output(tool.Output{Content: []tool.Content{tool.Text("v")}, Value: json.RawMessage(`{"n":1}`)}, nil))),
		goTool("value_no_schema", output(tool.Output{Content: []tool.Content{tool.Text("v")}, Value: json.RawMessage(`{"n":1}`)}, nil)),
		withSchema(goTool("null_value", output(tool.Output{Content: []tool.Content{tool.Text("v")}, Value: json.RawMessage(`null`)}, nil))),
		goTool("not_canonical", output(tool.Output{Content: []tool.Content{tool.Text("go value")}, Value: json.RawMessage(`{"content":[],"other":1}`)}, nil)),
		goTool("content_shaped_value", output(tool.Output{Content: []tool.Content{tool.Text("file has 2 lines")}, Value: json.RawMessage(`{"content":["line one","line two"]}`)}, nil)),
		goTool("wire", output(tool.Output{Content: []tool.Content{tool.Text("projected")}, Wire: json.RawMessage(`{"content":[{"type":"text","text":"raw","extra":1}],"structuredContent":{"n":2}}`)}, nil)),
		goTool("wire_is_error", output(tool.Output{Content: []tool.Content{tool.Text("projected")}, Wire: json.RawMessage(`{"isError":true,"content":[{"type":"text","text":"raw"}]}`)}, nil)),
		goTool("odd_type", output(tool.Output{Content: []tool.Content{{Type: "video", Text: "x"}}}, nil)),
		goTool("invalid_value", output(tool.Output{Content: []tool.Content{tool.Text("v")}, Value: json.RawMessage(`{oops`)}, nil)),
		goTool("fails", output(tool.Output{}, errors.New("boom"))),
		goTool("tool_error_raw", output(tool.Output{}, &tool.ToolError{Message: "projected", Wire: json.RawMessage(`{"isError":true,"content":[{"type":"text","text":"raw failure"}]}`)})),
		goTool("tool_error_odd", output(tool.Output{}, &tool.ToolError{Message: "projected failure", Wire: json.RawMessage(`"not an object"`)})),
		goTool("tool_error_empty", output(tool.Output{}, &tool.ToolError{Message: "no raw"})),
		goTool("tool_error_no_content", output(tool.Output{}, &tool.ToolError{Message: "projected", Wire: json.RawMessage(`{"isError":true}`)})),
	}
	if _, err := reg.Register(tools...); err != nil {
		t.Fatal(err)
	}
	c := connectRaw(t, newGateway(t, reg, Options{}))

	tests := []struct {
		tool, args          string
		isError             bool
		content, structured string
	}{
		{tool: "text", content: `[{"type":"text","text":"hi"}]`},
		{tool: "args", args: `{"a":[1,2]}`, content: `[{"type":"text","text":"{\"a\":[1,2]}"}]`},
		{tool: "args", content: `[{"type":"text","text":"{}"}]`},
		{tool: "nil_content", content: `[]`},
		{tool: "value_schema", content: `[{"type":"text","text":"v"}]`, structured: `{"n":1}`},
		{tool: "value_no_schema", content: `[{"type":"text","text":"v"}]`, structured: `{"n":1}`},
		{tool: "null_value", content: `[{"type":"text","text":"v"}]`},
		{tool: "not_canonical", content: `[{"type":"text","text":"go value"}]`, structured: `{"content":[],"other":1}`},
		{tool: "content_shaped_value", content: `[{"type":"text","text":"file has 2 lines"}]`, structured: `{"content":["line one","line two"]}`},
		{tool: "wire", content: `[{"type":"text","text":"raw","extra":1}]`, structured: `{"n":2}`},
		{tool: "wire_is_error", isError: true, content: `[{"type":"text","text":"raw"}]`},
		{tool: "odd_type", content: `[{"type":"text","text":"[unsupported MCP content type: video]"}]`},
		{tool: "invalid_value", isError: true, content: `[{"type":"text","text":"Error: tool \"invalid_value\" returned invalid output: value is not valid JSON: invalid character 'o' looking for beginning of object key string"}]`},
		{tool: "fails", isError: true, content: `[{"type":"text","text":"Error: boom"}]`},
		{tool: "tool_error_raw", isError: true, content: `[{"type":"text","text":"raw failure"}]`},
		{tool: "tool_error_odd", isError: true, content: `[{"type":"text","text":"Error: projected failure"}]`},
		{tool: "tool_error_empty", isError: true, content: `[{"type":"text","text":"Error: no raw"}]`},
		{tool: "tool_error_no_content", isError: true, content: `[{"type":"text","text":"(no output)"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.tool+tt.args, func(t *testing.T) {
			params := `{"name":"` + tt.tool + `"}`
			if tt.args != "" {
				params = `{"name":"` + tt.tool + `","arguments":` + tt.args + `}`
			}
			res := c.request("tools/call", params)
			if res.Error != nil {
				t.Fatalf("JSON-RPC error %+v", res.Error)
			}
			var got struct {
				IsError    bool            `json:"isError"`
				Content    json.RawMessage `json:"content"`
				Structured json.RawMessage `json:"structuredContent"`
			}
			if err := json.Unmarshal(res.Result, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.content, string(got.Content)); diff != "" || got.IsError != tt.isError {
				t.Errorf("isError %v (want %v), content (-want +got):\n%s", got.IsError, tt.isError, diff)
			}
			if string(got.Structured) != tt.structured {
				t.Errorf("structuredContent %s, want %q", got.Structured, tt.structured)
			}
		})
	}
}

// The handler on its own (no middleware, no session): the cases a wire
// test cannot time.
func TestHandlerDirect(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(goTool("img", func(context.Context, json.RawMessage) (tool.Output, error) {
		return tool.Output{Wire: json.RawMessage(`{"content":[{"type":"image","mimeType":"image/png","data":"AQ=="},{"type":"video"}]}`)}, nil
	})); err != nil {
		t.Fatal(err)
	}
	g := newGateway(t, reg, Options{})
	req := func(name string) *mcp.CallToolRequest {
		return &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: name}}
	}

	// Without the middleware, the blocks come back typed.
	res, err := g.handleCall(context.Background(), req("img"))
	if err != nil {
		t.Fatal(err)
	}
	want := []mcp.Content{
		&mcp.ImageContent{MIMEType: "image/png", Data: []byte{1}},
		&mcp.TextContent{Text: "[unsupported MCP content type: video]"},
	}
	if diff := cmp.Diff(want, res.Content); diff != "" {
		t.Errorf("typed content (-want +got):\n%s", diff)
	}

	// Listed but no longer registered: a JSON-RPC error, as for any name
	// the server does not know.
	_, err = g.handleCall(context.Background(), req("gone"))
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) || wire.Code != jsonrpc.CodeInvalidParams || wire.Message != `unknown tool "gone"` {
		t.Errorf("gone tool: %v, want JSON-RPC -32602 unknown tool", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err = g.handleCall(ctx, req("img"))
	if err != nil || !res.IsError || cmp.Diff([]string{"Error: tool call aborted before dispatch"}, texts(res)) != "" {
		t.Errorf("cancelled before dispatch: %v %v %v", err, res.IsError, texts(res))
	}

	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	res, err = g.handleCall(context.Background(), req("img"))
	if err != nil || !res.IsError || cmp.Diff([]string{"Error: tool call refused: the gateway is shutting down"}, texts(res)) != "" {
		t.Errorf("after Close: %v %v %v", err, res.IsError, texts(res))
	}
}

// Close answers the calls in flight (cancelled at the backend) and ends
// every session; a session ended by its own ctx does the same for its calls.
func TestShutdownAnswersCallsInFlight(t *testing.T) {
	for _, version := range []string{"", "2025-11-25"} { // the SDK's path, the take
		t.Run("version "+version, func(t *testing.T) { shutdownAnswersCallsInFlight(t, version) })
	}
}

func shutdownAnswersCallsInFlight(t *testing.T, version string) {
	t.Run("Close", func(t *testing.T) {
		_, g, bs := twoBackends(t, Options{})
		viaSDK := sdkCalls(g)
		c := connectInMemoryAt(t, g, version)
		res := slowCallUntil(t, c, func() {
			if err := g.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		if !res.IsError || cmp.Diff([]string{"Error: tool call cancelled: the gateway is shutting down"}, texts(res)) != "" {
			t.Errorf("call in flight at Close: isError %v, %q", res.IsError, texts(res))
		}
		waitSignal(t, bs["a"].cancelled, "the backend seeing the cancellation")
		if err := g.ServeTransport(context.Background(), nil); !errors.Is(err, ErrClosed) {
			t.Errorf("ServeTransport after Close = %v, want ErrClosed", err)
		}
		if err := g.ServeStdio(context.Background(), nil, nil); !errors.Is(err, ErrClosed) {
			t.Errorf("ServeStdio after Close = %v, want ErrClosed", err)
		}
		if err := g.Close(); err != nil {
			t.Errorf("second Close = %v", err)
		}
		if taken := viaSDK.Load() == 0; taken != (version != "") {
			t.Errorf("the take answered the call: %v, want %v", taken, version != "")
		}
	})
	t.Run("session ctx", func(t *testing.T) {
		_, g, bs := twoBackends(t, Options{})
		c := &client{}
		cs, s := connectClient(t, g, newSDKClient(c), &mcp.ClientSessionOptions{ProtocolVersion: version})
		c.session = cs
		res := slowCallUntil(t, c, s.stop)
		if !res.IsError || cmp.Diff([]string{"Error: tool call cancelled: the client session is closing"}, texts(res)) != "" {
			t.Errorf("call in flight at the session's end: isError %v, %q", res.IsError, texts(res))
		}
		waitSignal(t, bs["a"].cancelled, "the backend seeing the cancellation")
		if err := s.wait(t); err != nil {
			t.Errorf("ServeTransport = %v", err)
		}
	})
}

// slowCallUntil starts mcp__a__slow, runs stop once the backend has it, and
// returns the call's result.
func slowCallUntil(t *testing.T, c *client, stop func()) *mcp.CallToolResult {
	t.Helper()
	params := &mcp.CallToolParams{Name: "mcp__a__slow", Arguments: json.RawMessage(`{"ms":600000}`)}
	params.SetProgressToken(1)
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		res, err := c.session.CallTool(ctx, params)
		done <- outcome{res, err}
	}()
	waitSignal(t, c.progress, "the call to reach the backend")
	stop()
	o := waitSignal(t, done, "the call to be answered")
	if o.err != nil {
		t.Fatalf("call in flight got no answer: %v", o.err)
	}
	return o.res
}

// A tool that ignores cancellation makes Close give up after the timeout,
// with an error saying so.
func TestCloseIsBounded(t *testing.T) {
	for _, version := range []string{"", "2025-11-25"} { // the SDK's path, the take
		t.Run("version "+version, func(t *testing.T) { closeIsBounded(t, version) })
	}
}

func closeIsBounded(t *testing.T, version string) {
	reg := tool.NewRegistry()
	entered, release := make(chan struct{}), make(chan struct{})
	if _, err := reg.Register(goTool("stubborn", func(context.Context, json.RawMessage) (tool.Output, error) {
		close(entered)
		<-release // ignores ctx on purpose
		return tool.Output{}, nil
	})); err != nil {
		t.Fatal(err)
	}
	g := New(reg, Options{ShutdownTimeout: 50 * time.Millisecond})
	viaSDK := sdkCalls(g)
	cs, s := connectClient(t, g, mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil), &mcp.ClientSessionOptions{ProtocolVersion: version})
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "stubborn"})
		called <- err
	}()
	waitSignal(t, entered, "the tool to run")
	err := g.Close()
	if err == nil || !strings.Contains(err.Error(), "1 call(s) still unanswered when the shutdown timeout (50ms) passed") {
		t.Errorf("Close = %v, want the timeout error", err)
	}
	close(release)
	waitSignal(t, called, "the stubborn call to end")
	if taken := viaSDK.Load() == 0; taken != (version != "") {
		t.Errorf("the take answered the call: %v, want %v", taken, version != "")
	}
	if err := s.wait(t); err != nil {
		t.Errorf("ServeTransport = %v", err)
	}
}

// A client that repeats the id of a call in flight gets no answer for
// the repeat, and the call still counts as unanswered: Close waits for
// its reply before it closes the session.
func TestCloseAnswersACallWhoseIDWasRepeated(t *testing.T) {
	reg := tool.NewRegistry()
	entered := make(chan struct{})
	if _, err := reg.Register(goTool("tidy", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		close(entered)
		<-ctx.Done()
		time.Sleep(300 * time.Millisecond) // tidying up before it returns
		return tool.Output{}, ctx.Err()
	})); err != nil {
		t.Fatal(err)
	}
	g := New(reg, Options{})
	c := connectRaw(t, g)
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"tidy"}}`
	c.send(call)
	waitSignal(t, entered, "the call to start")
	c.send(call)
	c.noAnswer("7", `{"jsonrpc":"2.0","id":"after","method":"ping"}`, "after")
	if err := g.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if m := c.response("7"); m.Error != nil || !strings.Contains(string(m.Result), `"isError":true`) {
		t.Errorf("the call answered %s %+v, want its isError result", m.Result, m.Error)
	}
}

// A client that leaves mid-call: the call is cancelled (a backend would get
// notifications/cancelled) and nothing waits for its reply any more.
func TestClientLeavesMidCall(t *testing.T) {
	reg := tool.NewRegistry()
	entered, exited := make(chan struct{}), make(chan error, 1)
	if _, err := reg.Register(goTool("wait", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		close(entered)
		<-ctx.Done()
		exited <- context.Cause(ctx)
		return tool.Output{}, ctx.Err()
	})); err != nil {
		t.Fatal(err)
	}
	g := newGateway(t, reg, Options{})
	c := connectRaw(t, g)
	c.send(`{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{"name":"wait"}}`)
	waitSignal(t, entered, "the call to start")
	c.w.Close()
	if cause := waitSignal(t, exited, "the call to be cancelled"); cause == nil {
		t.Error("the call ended without a cause")
	}
	waitFor(t, "no call left to answer", func() bool { return g.answering.wait(time.Now()) == 0 })
}

// resultMembers reads the members fromRaw uses as decoding the result into
// a map did: null has none, the last of a repeated member counts, keys
// match after unescaping and exactly, whitespace is ignored, and what is
// not an object is refused.
func TestResultMembers(t *testing.T) {
	for _, raw := range []string{
		`{"content":[{"type":"text","text":"a"}],"isError":true,"structuredContent":{"a":1}}`,
		` { "isError" : false , "content" : [ ] , "structuredContent" : null } `,
		`{"isError":true,"isError":false,"content":[1],"content":"x"}`,
		`{"is\u0045rror":true,"\u0063ontent":[2],"IsError":true,"Content":[3],"structuredcontent":{}}`,
		`{}`, `null`, ` null `,
	} {
		got, err := resultMembers(json.RawMessage(raw))
		if err != nil {
			t.Errorf("%s: %v", raw, err)
			continue
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatal(err)
		}
		if string(got.isError) != string(want["isError"]) || string(got.content) != string(want["content"]) ||
			string(got.structured) != string(want["structuredContent"]) {
			t.Errorf("%s: read isError %s, content %s, structuredContent %s; a map decodes %s, %s, %s", raw,
				got.isError, got.content, got.structured, want["isError"], want["content"], want["structuredContent"])
		}
	}
	for _, raw := range []string{`[]`, `"x"`, `1`, `true`} {
		if _, err := resultMembers(json.RawMessage(raw)); err == nil || err.Error() != "result is not a JSON object" {
			t.Errorf("%s: err = %v, want it refused as not an object", raw, err)
		}
	}
}
