package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/serverwire"
	"github.com/mcpbridge/mcpbridge/tool"
)

// openSDKPathSession opens a raw session whose client offers
// elicitation (besides roots and sampling), whose calls the HTTP fast
// path leaves to the SDK (the gateway's own transport takes them).
func openSDKPathSession(t *testing.T, base string) *httpSession {
	t.Helper()
	return openHTTPSessionWith(t, base, `{"roots":{},"sampling":{},"elicitation":{}}`, "")
}

// sdkReference serves g's MCP server through the SDK's own Streamable
// HTTP handler, with the gateway's handler options, until the end of the
// test, and returns its base URL: the reference a differential test
// compares the gateway's endpoint with (its take, or its own
// transport), exchange by exchange. Its calls take the SDK's path
// (sdkCall): no take.
func sdkReference(t *testing.T, g *Gateway) string {
	t.Helper()
	return sdkReferenceOf(t, g, false)
}

// sdkReferenceOf is sdkReference, with the SDK's stateless handler when
// stateless.
func sdkReferenceOf(t *testing.T, g *Gateway, stateless bool) string {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.server },
		httpOptions(slog.New(slog.DiscardHandler), stateless, time.Hour))
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts.URL
}

// sameAnswer reports how the gateway's answer (got, gotHeader) differs
// from the SDK's reference answer to the same exchange, "" when it does
// not: the same status, and the same body, stream ids aside, except that
// a response the gateway wrote alone as one application/json body must
// be the message of the reference's one SSE event.
func sameAnswer(got, want httpAnswer) string {
	if got.status != want.status {
		return fmt.Sprintf("status %d, the SDK's %d (bodies %q and %q)", got.status, want.status, got.body, want.body)
	}
	wantBody := want.body
	if mediaType(got.header.Get("Content-Type")) == "application/json" && mediaType(want.header.Get("Content-Type")) == "text/event-stream" {
		if strings.Count(want.body, "event: message\n") != 1 {
			return fmt.Sprintf("one JSON body %q, but the SDK's stream carried more than its response: %q", got.body, want.body)
		}
		wantBody = lastData(want.body)
	}
	return cmp.Diff(wantBody, got.body)
}

// sortedEvents is an SSE body's events in sorted order, without their
// indexes.
func sortedEvents(body string) string {
	events := strings.SplitAfter(eventIndexes.ReplaceAllString(body, "id: STREAM_N"), "\n\n")
	slices.Sort(events)
	return strings.Join(events, "")
}

// eventIndexes are the indexes of event ids made alike by eventIDs.
var eventIndexes = regexp.MustCompile(`(?m)^id: STREAM_\d+`)

// httpAnswer is an HTTP answer: its status, header and body, stream ids made
// alike.
type httpAnswer struct {
	status int
	header http.Header
	body   string
}

// exchange posts body on s with the extra headers and returns the answer.
func exchange(t *testing.T, s *httpSession, body string, header map[string]string) httpAnswer {
	t.Helper()
	return request(t, s, http.MethodPost, body, header)
}

// setLevel sets the session's log level.
func (s *httpSession) setLevel(level string) {
	s.t.Helper()
	resp := s.post(context.Background(), `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"`+level+`"}}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// takenTools registers tools whose results exercise the wire: plain
// text, a failure, a structured value with HTML characters, progress
// before the result.
func takenTools(t *testing.T) *tool.Registry {
	t.Helper()
	reg := tool.NewRegistry()
	tools := []tool.Tool{
		goTool("plain", textBody("plain <b>&</b>")),
		goTool("fails", func(context.Context, json.RawMessage) (tool.Output, error) {
			return tool.Output{}, errors.New("it broke <here>")
		}),
		goTool("structured", func(context.Context, json.RawMessage) (tool.Output, error) {
			return tool.Output{Content: []tool.Content{tool.Text("s")}, Value: json.RawMessage(`{"h":"<i>&</i>","n":1.50}`)}, nil
		}),
		goTool("logs", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
			log := tool.LogFrom(ctx)
			log(json.RawMessage(`{"level":"info","data":"below the session's level"}`))
			log(json.RawMessage(`{"level":"error","logger":"l","data":{"m":"seen <&>"}}`))
			return tool.Output{Content: []tool.Content{tool.Text("logged")}}, nil
		}),
		goTool("steps", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
			tool.ReportProgress(ctx, tool.Progress{Progress: 1, Total: 2, Message: "half <&>"})
			tool.ReportProgress(ctx, tool.Progress{Progress: 2, Total: 2})
			return tool.Output{Content: []tool.Content{tool.Text("done")}}, nil
		}),
	}
	for _, tl := range tools {
		if _, err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// wireCall is a call of takenTools whose answer the take and the
// SDK's must write alike, and whether it is streamed (SSE) or one JSON
// body.
type wireCall struct {
	body   string
	stream bool
}

// wireCalls are the calls of takenTools every bytes test makes: a
// result at once, a failure, structured content with HTML characters,
// progress under a string and a number token, log messages.
var wireCalls = []wireCall{
	{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"plain","arguments":{}}}`, false},
	{`{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"fails"}}`, false},
	{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"structured","_meta":{"k":"v"}}}`, false},
	{`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"steps","_meta":{"progressToken":"tok"}}}`, true},
	{`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"steps","_meta":{"progressToken":5}}}`, true},
	{`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"logs"}}`, true},
}

// eventIDs are an SSE body's event ids: random stream ids, then indexes.
var eventIDs = regexp.MustCompile(`(?m)^id: [^_\n]+_`)

// The gateway answers a call with the bytes the SDK's handler writes for
// it, on the SDK's path (sdkReference): a result ready before anything
// else was sent as the application/json body the SDK writes with
// JSONResponse (its framing checked against the SDK in sdkwire), the
// message the SDK's own path sends; a call with progress as the SDK's SSE
// stream, byte for byte, headers included. The gateway's call is its
// own (the take beneath its own transport), never the
// SDK's path.
func TestHTTPTakenBytesAsSDK(t *testing.T) {
	g := newGateway(t, takenTools(t), Options{})
	sdk := sdkCalls(g)
	base := serveHTTP(t, g, Options{})
	fast, slow := openHTTPSession(t, base), openHTTPSession(t, sdkReference(t, g))
	fast.setLevel("warning")
	slow.setLevel("warning")
	for _, call := range wireCalls {
		before := sdk.Load()
		got, gotHeader := postAll(t, fast, call.body)
		if sdk.Load() != before {
			t.Fatalf("the take left %s to the SDK", call.body)
		}
		want, wantHeader := postAll(t, slow, call.body)
		if sdk.Load() != before+1 {
			t.Fatalf("the SDK's path did not serve %s", call.body)
		}
		if !call.stream {
			want = lastData(want)
			wantHeader = http.Header{}
			serverwire.SetResponseHeaders(wantHeader, true)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: the take's body differs from the SDK's (-SDK +taken):\n%s", call.body, diff)
		}
		for _, key := range []string{"Content-Type", "Cache-Control", "Connection"} {
			if gotHeader.Get(key) != wantHeader.Get(key) {
				t.Errorf("%s: header %s = %q, the SDK's %q", call.body, key, gotHeader.Get(key), wantHeader.Get(key))
			}
		}
	}
}

// A call that outlasts primeFlush is answered as the SDK's SSE stream,
// byte for byte: the priming event first, then the result.
func TestHTTPTakenSlowCallStreams(t *testing.T) {
	reg := tool.NewRegistry()
	entered, release, exited := waitingTool(t, reg)
	g := newGateway(t, reg, Options{})
	base := serveHTTP(t, g, Options{})
	fast, slow := openHTTPSession(t, base), openHTTPSession(t, sdkReference(t, g))
	resp := fast.post(context.Background(), waitCall)
	var read strings.Builder
	body := bufio.NewReader(io.TeeReader(resp.Body, &read))
	sseField(t, body, "id") // the priming event, sent while the call runs
	waitSignal(t, entered, "the call to start")
	close(release)
	io.Copy(io.Discard, body)
	resp.Body.Close()
	waitSignal(t, exited, "the call to end")
	got := eventIDs.ReplaceAllString(read.String(), "id: STREAM_")
	want, wantHeader := postAll(t, slow, waitCall)
	waitSignal(t, exited, "the SDK's call to end")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the take's stream differs from the SDK's (-SDK +taken):\n%s", diff)
	}
	if resp.Header.Get("Content-Type") != wantHeader.Get("Content-Type") {
		t.Errorf("Content-Type %q, the SDK's %q", resp.Header.Get("Content-Type"), wantHeader.Get("Content-Type"))
	}
}

// lastData is the data of an SSE body's last event.
func lastData(body string) string {
	i := strings.LastIndex(body, "\ndata: ")
	return strings.TrimSuffix(body[i+len("\ndata: "):], "\n\n")
}

// postAll posts body and returns the whole response body, its stream ids
// made alike, and its header.
func postAll(t *testing.T, s *httpSession, body string) (string, http.Header) {
	t.Helper()
	resp := s.post(context.Background(), body)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return eventIDs.ReplaceAllString(string(b), "id: STREAM_"), resp.Header
}

// What the gateway's own path does not take (the take leaves it to
// the SDK's handler; beneath the gateway's own transport the take leaves
// it to the SDK's session) is answered as the SDK's handler answers it
// (sdkReference), status and body; the requests the SDK's session serves
// in either build (a name or a member the take does not read) take the
// SDK's path.
func TestHTTPTakenLeavesTheRestToSDK(t *testing.T) {
	g := newGateway(t, takenTools(t), Options{})
	sdk := sdkCalls(g)
	base, ref := serveHTTP(t, g, Options{}), sdkReference(t, g)
	s, sRef := openHTTPSession(t, base), openHTTPSession(t, ref)
	asker, askerRef := openHTTPSessionWith(t, base, `{"elicitation":{}}`, ""), openHTTPSessionWith(t, ref, `{"elicitation":{}}`, "")
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"plain"}}`
	tests := []struct {
		name         string
		asker        bool
		body         string
		header       map[string]string
		bySDKSession bool
		unordered    bool // its responses come in the order they are ready
	}{
		{name: "a client that offers elicitation", asker: true, body: call},
		{name: "a batch", body: "[" + call + "]", header: map[string]string{"Mcp-Protocol-Version": "2025-03-26"}},
		{name: "a batch of two", body: "[" + call + `,{"jsonrpc":"2.0","id":8,"method":"tools/list"}]`, header: map[string]string{"Mcp-Protocol-Version": "2025-03-26"}, unordered: true},
		{name: "a batch past 2025-03-26", body: "[" + call + "]", header: map[string]string{"Mcp-Protocol-Version": "2025-06-18"}},
		{name: "an unknown tool", body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nosuch"}}`, bySDKSession: true},
		{name: "an unknown member", body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"plain","someday":{}}}`, bySDKSession: true},
		{name: "a header the SDK checks", body: call, header: map[string]string{"Mcp-Method": "tools/call"}},
		{name: "an unknown version", body: call, header: map[string]string{"Mcp-Protocol-Version": "1999-01-01"}},
		{name: "2026-07-28 on a session", body: call, header: map[string]string{"Mcp-Protocol-Version": "2026-07-28"}},
		{name: "a text body", body: call, header: map[string]string{"Content-Type": "text/plain"}},
		{name: "Accept without SSE", body: call, header: map[string]string{"Accept": "application/json"}},
		// wildcards the SDK's handler takes (the gateway's used to refuse them, 400)
		{name: "Accept */*", body: call, header: map[string]string{"Accept": "*/*"}},
		{name: "Accept application/*, text/*", body: call, header: map[string]string{"Accept": "application/*, text/*"}},
		{name: "Accept application/json, text/*", body: call, header: map[string]string{"Accept": "application/json, text/*"}},
		{name: "Last-Event-ID", body: call, header: map[string]string{"Last-Event-ID": "x_1"}},
		{name: "malformed JSON", body: `{"jsonrpc":"2.0","id":7,`},
		{name: "an empty batch", body: `[]`},
		{name: "a notification", body: `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`},
		// a call without an id was dropped with 202, its client waiting
		// for an answer that never came; a notification with one, too
		{name: "a call without an id", body: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"plain"}}`},
		{name: "a notification with an id", body: `{"jsonrpc":"2.0","id":3,"method":"notifications/roots/list_changed"}`},
		{name: "an unknown session", body: call, header: map[string]string{"Mcp-Session-Id": "nosuch"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			on, onRef := s, sRef
			if tt.asker {
				on, onRef = asker, askerRef
			}
			before := sdk.Load()
			got := exchange(t, on, tt.body, tt.header)
			if tt.bySDKSession && sdk.Load() != before+1 {
				t.Errorf("the SDK's session did not serve it (answer %s)", got.body)
			}
			want := exchange(t, onRef, tt.body, tt.header)
			if tt.unordered {
				got.body, want.body = sortedEvents(got.body), sortedEvents(want.body)
			}
			if diff := sameAnswer(got, want); diff != "" {
				t.Errorf("the answer differs from the SDK's handler's (-SDK +gateway):\n%s", diff)
			}
		})
	}
}

// A client's notifications/cancelled ends the take's call, whose
// answer then says it was cancelled.
func TestHTTPTakenCallCancelled(t *testing.T) {
	reg := tool.NewRegistry()
	entered, _, exited := waitingTool(t, reg)
	g := newGateway(t, reg, Options{})
	sdk := sdkCalls(g)
	s := openHTTPSession(t, serveHTTP(t, g, Options{}))
	answered := make(chan string, 1)
	go func() {
		resp, err := s.send(context.Background(), waitCall)
		if err != nil {
			answered <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answered <- string(b)
	}()
	waitSignal(t, entered, "the call to start")
	resp := s.post(context.Background(), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`)
	resp.Body.Close()
	if cause := waitSignal(t, exited, "the call to be cancelled"); cause == nil {
		t.Error("the call ended uncancelled")
	}
	if body := waitSignal(t, answered, "the answer"); !strings.Contains(body, `"id":7`) {
		t.Errorf("answer %q, want the response to request 7", body)
	}
	if sdk.Load() != 0 {
		t.Error("the call went the SDK's way")
	}
}

// A request id in flight on the session is refused, as the SDK refuses
// it, and the call in flight goes on.
func TestHTTPTakenDuplicateID(t *testing.T) {
	s, release, exited := callWaiting(t)
	resp, err := s.send(context.Background(), waitCall)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "duplicate in-flight request ID 7") {
		t.Errorf("a repeated id got %s %s, want 400 and the SDK's error", resp.Status, b)
	}
	close(release)
	if cause := waitSignal(t, exited, "the first call to end"); cause != nil {
		t.Errorf("the first call was cancelled: %v", cause)
	}
}

// The take's calls pass the same edge as the SDK's: a caller without
// credentials is refused before its body is read, and one who presents a
// session another identity opened is told the session does not exist;
// neither call runs.
func TestHTTPTakenBehindTheEdge(t *testing.T) {
	reg := tool.NewRegistry()
	var runs atomic.Int64
	if _, err := reg.Register(goTool("hello", func(context.Context, json.RawMessage) (tool.Output, error) {
		runs.Add(1)
		return tool.Output{Content: []tool.Content{tool.Text("hi")}}, nil
	})); err != nil {
		t.Fatal(err)
	}
	opts := Options{Authenticate: aliceOrBob}
	g := newGateway(t, reg, opts)
	sdk := sdkCalls(g)
	s := openHTTPSessionWith(t, serveHTTP(t, g, opts), `{}`, "alice-secret")
	as := func(who string, body string) *http.Request {
		req := s.newRequest(context.Background(), http.MethodPost, body)
		req.Header.Set("Authorization", "Bearer "+who+"-secret")
		return req
	}
	call := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"hello"}}`
	for _, tt := range []struct {
		who  string
		want int
	}{
		{"bob", http.StatusNotFound},
		{"nobody", http.StatusUnauthorized},
		{"alice", http.StatusOK},
	} {
		resp, err := http.DefaultClient.Do(as(tt.who, call))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s's call in alice's session: status %d (%s), want %d", tt.who, resp.StatusCode, body, tt.want)
		}
	}
	if runs.Load() != 1 || sdk.Load() != 0 {
		t.Errorf("the tool ran %d times (want alice's call alone), the SDK served %d calls (want 0)", runs.Load(), sdk.Load())
	}
}

// The session's cap on calls in flight holds on the take: the call
// over it is refused with the JSON-RPC error naming the limit.
func TestHTTPTakenCallsBounded(t *testing.T) {
	reg := tool.NewRegistry()
	entered, release, _ := waitingTool(t, reg)
	g := newGateway(t, reg, Options{MaxCallsPerSession: 1})
	sdk := sdkCalls(g)
	s := openHTTPSession(t, serveHTTP(t, g, Options{}))
	s.sendAside(waitCall)
	waitSignal(t, entered, "the call to start")
	body, _ := postAll(t, s, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"wait"}}`)
	if !strings.Contains(body, `"id":8,"error":{"code":-32603,"message":"too many tool calls in flight on this session (the gateway's limit is 1)`) {
		t.Errorf("the call over the cap got %s", body)
	}
	close(release)
	if sdk.Load() != 0 {
		t.Error("a call went the SDK's way")
	}
}

// A session that ended is not found, as the SDK says of it, and its call
// does not run.
func TestHTTPTakenEndedSession(t *testing.T) {
	reg := takenTools(t)
	g := newGateway(t, reg, Options{})
	s := openHTTPSession(t, serveHTTP(t, g, Options{}))
	s.request(context.Background(), http.MethodDelete, "").Body.Close()
	resp, err := s.send(context.Background(), `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"plain"}}`)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("a call in an ended session: %s %s, want 404", resp.Status, b)
	}
}

// A backend's questions during a taken call (roots, sampling) go to
// the client on the call's own stream, as the SDK sends them (the ids
// apart: the take's are its own strings), and the client's answers,
// POSTed on its session, reach the backend.
func TestHTTPTakenQuestions(t *testing.T) {
	reg := tool.NewRegistry()
	for _, q := range []struct{ name, method, params string }{
		{"roots", tool.AskRoots, `{}`},
		{"sample", tool.AskSample, `{"messages":[{"role":"user","content":{"type":"text","text":"hi <&>"}}],"maxTokens":5}`},
	} {
		if _, err := reg.Register(goTool(q.name, func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
			answer, err := tool.AskFrom(ctx)(ctx, tool.Ask{Method: q.method, Params: json.RawMessage(q.params)})
			if err != nil {
				return tool.Output{}, err
			}
			return tool.Output{Content: []tool.Content{tool.Text(string(answer))}}, nil
		})); err != nil {
			t.Fatal(err)
		}
	}
	g := newGateway(t, reg, Options{})
	sdk := sdkCalls(g)
	base := serveHTTP(t, g, Options{})
	fast := openHTTPSessionWith(t, base, `{"roots":{},"sampling":{}}`, "")
	slow := openHTTPSessionWith(t, sdkReference(t, g), `{"roots":{},"sampling":{}}`, "")
	for _, q := range []struct{ call, answer, asked, answered string }{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"roots"}}`, `{"roots":[{"uri":"file:///r","name":"r"}]}`,
			`"method":"roots/list"`, `file:///r`},
		{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"sample"}}`, `{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}`,
			`"method":"sampling/createMessage","params":{"maxTokens":5,"messages":[{"content":{"type":"text","text":"hi \u003c\u0026\u003e"},"role":"user"}]}`, `\"model\":\"m\"`},
	} {
		before := sdk.Load()
		got := answerQuestions(t, fast, q.call, q.answer)
		if sdk.Load() != before {
			t.Fatalf("the take left %s to the SDK", q.call)
		}
		want := answerQuestions(t, slow, q.call, q.answer)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: the take's stream differs from the SDK's (-SDK +taken):\n%s", q.call, diff)
		}
		if !strings.Contains(got, q.asked) || !strings.Contains(got, q.answered) {
			t.Errorf("%s: want the question %s on the stream and the answer %s in the result, got\n%s", q.call, q.asked, q.answered, got)
		}
	}
}

// questionIDs are the ids of the requests in an SSE body.
var questionIDs = regexp.MustCompile(`"id":("mcpbridge-ask-\d+"|\d+),"method"`)

// answerQuestions posts call on s, answers every request on its stream
// with answer, and returns the stream, its stream and request ids made
// alike.
func answerQuestions(t *testing.T, s *httpSession, call, answer string) string {
	t.Helper()
	resp := s.post(context.Background(), call)
	defer resp.Body.Close()
	var all strings.Builder
	body := bufio.NewReader(resp.Body)
	for {
		line, err := body.ReadString('\n')
		all.WriteString(line)
		if err != nil {
			break
		}
		data, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "data: ")
		if m := questionIDs.FindStringSubmatch(data); ok && m != nil {
			r, err := s.send(context.Background(), `{"jsonrpc":"2.0","id":`+m[1]+`,"result":`+answer+`}`)
			if err != nil {
				t.Fatal(err)
			}
			r.Body.Close()
			if r.StatusCode != http.StatusAccepted {
				t.Fatalf("the answer got %s", r.Status)
			}
		}
	}
	out := eventIDs.ReplaceAllString(all.String(), "id: STREAM_")
	return questionIDs.ReplaceAllString(out, `"id":"Q","method"`)
}

// openAskingSession opens a raw session whose client offers roots, which
// the take serves.
func openAskingSession(t *testing.T, base string) *httpSession {
	t.Helper()
	return openHTTPSessionWith(t, base, `{"roots":{}}`, "")
}

// rootsTool registers "roots", which asks the client for its roots and
// answers them, or the ask's error.
func rootsTool(t *testing.T, reg *tool.Registry) {
	t.Helper()
	if _, err := reg.Register(goTool("roots", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		answer, err := tool.AskFrom(ctx)(ctx, tool.Ask{Method: tool.AskRoots, Params: json.RawMessage(`{}`)})
		if err != nil {
			return tool.Output{}, err
		}
		return tool.Output{Content: []tool.Content{tool.Text(string(answer))}}, nil
	})); err != nil {
		t.Fatal(err)
	}
}

// nextData returns the data of the next SSE event that has some.
func nextData(t *testing.T, body *bufio.Reader) string {
	t.Helper()
	for {
		if data := sseField(t, body, "data"); data != "" {
			return data
		}
	}
}

// Another session cannot answer a session's question, even knowing its
// id: the answer goes to the SDK, and the question waits for its own
// client's answer.
func TestHTTPTakenAnswerFromAnotherSession(t *testing.T) {
	reg := tool.NewRegistry()
	rootsTool(t, reg)
	g := newGateway(t, reg, Options{})
	base := serveHTTP(t, g, Options{})
	victim, intruder := openAskingSession(t, base), openAskingSession(t, base)
	resp := victim.post(context.Background(), `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"roots"}}`)
	defer resp.Body.Close()
	body := bufio.NewReader(resp.Body)
	m := questionIDs.FindStringSubmatch(nextData(t, body))
	if m == nil {
		t.Fatal("no question on the call's stream")
	}
	r, err := intruder.send(context.Background(), `{"jsonrpc":"2.0","id":`+m[1]+`,"result":{"roots":[{"uri":"file:///evil"}]}}`)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	r, err = victim.send(context.Background(), `{"jsonrpc":"2.0","id":`+m[1]+`,"result":{"roots":[{"uri":"file:///mine"}]}}`)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusAccepted {
		t.Fatalf("the client's own answer got %s", r.Status)
	}
	if result := nextData(t, body); !strings.Contains(result, "file:///mine") || strings.Contains(result, "evil") {
		t.Errorf("the call answered %s, want the client's own roots", result)
	}
}

// A question pending when its call is cancelled is cancelled on the
// call's stream, as the SDK cancels its own.
func TestHTTPTakenQuestionCancelled(t *testing.T) {
	reg := tool.NewRegistry()
	rootsTool(t, reg)
	g := newGateway(t, reg, Options{})
	s := openAskingSession(t, serveHTTP(t, g, Options{}))
	resp := s.post(context.Background(), `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"roots"}}`)
	defer resp.Body.Close()
	body := bufio.NewReader(resp.Body)
	m := questionIDs.FindStringSubmatch(nextData(t, body))
	if m == nil {
		t.Fatal("no question on the call's stream")
	}
	s.post(context.Background(), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`).Body.Close()
	if data := nextData(t, body); !strings.Contains(data, `"method":"notifications/cancelled","params":{"reason":"context canceled","requestId":`+m[1]+`}`) {
		t.Errorf("after the cancel the stream carried %s, want the question cancelled", data)
	}
	if data := nextData(t, body); !strings.Contains(data, `"id":7,"result"`) {
		t.Errorf("then %s, want the call's answer", data)
	}
}

// A client that comes back after its call ended gets the result from the
// SDK's replay of the events the take kept, as it would get one of
// the SDK's own streams.
func TestHTTPTakenEndedStreamReplayed(t *testing.T) {
	reg := tool.NewRegistry()
	entered, release, exited := waitingTool(t, reg)
	g := newGateway(t, reg, Options{})
	graces := graces(g)
	sdk := sdkCalls(g)
	s := openHTTPSession(t, serveHTTP(t, g, Options{}))
	ctx, leave := context.WithCancel(context.Background())
	resp := s.post(ctx, waitCall)
	primed := sseField(t, bufio.NewReader(resp.Body), "id")
	waitSignal(t, entered, "the call to start")
	leave()
	resp.Body.Close()
	grace := waitSignal(t, graces, "the resume grace to start")
	close(release)
	if cause := waitSignal(t, exited, "the call to end"); cause != nil {
		t.Fatalf("the call was cancelled: %v", cause)
	}
	get := s.newRequest(context.Background(), http.MethodGet, "")
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set("Last-Event-ID", primed)
	replayed := s.do(get)
	defer replayed.Body.Close()
	if data := sseField(t, bufio.NewReader(replayed.Body), "data"); !strings.Contains(data, `"id":7,"result"`) || !strings.Contains(data, "released") {
		t.Errorf("the replayed stream carried %s, want the call's result", data)
	}
	grace()
	if sdk.Load() != 0 {
		t.Error("the call went the SDK's way")
	}
}

// A DELETE the transport refuses (an unsupported protocol version: 400)
// ends nothing: the session's call in flight goes on to its result and
// the session serves the next one. It used to cancel the session's calls
// first and leave it closing, refusing every later call.
func TestRefusedDeleteEndsNothing(t *testing.T) {
	s, release, exited := callWaiting(t)
	req := s.newRequest(context.Background(), http.MethodDelete, "")
	req.Header.Set("Mcp-Protocol-Version", "1999-01-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a DELETE of an unsupported version: %s, want 400", resp.Status)
	}
	close(release)
	if cause := waitSignal(t, exited, "the call to end"); cause != nil {
		t.Errorf("the call was cancelled by the refused DELETE: %v", cause)
	}
	got := exchange(t, s, `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`, nil)
	if !strings.Contains(got.body, `"wait"`) {
		t.Errorf("the session after the refused DELETE: %d %s", got.status, got.body)
	}
}

// A session ended while a call of it is in flight (its client's DELETE,
// or its eviction) answers that call, cancelled, before the session
// closes: the POST gets its answer saying why, not an empty 200, which
// it used to get (a closing session drops the answers it has not
// written).
func TestSessionEndAnswersItsCalls(t *testing.T) {
	for _, end := range []string{"DELETE", "eviction"} {
		t.Run(end, func(t *testing.T) {
			reg := tool.NewRegistry()
			entered, _, exited := waitingTool(t, reg)
			opts := Options{}
			if end == "eviction" {
				opts.MaxSessions = 1
			}
			g := newGateway(t, reg, opts)
			base := serveHTTP(t, g, opts)
			s := openHTTPSession(t, base)
			answered := make(chan httpAnswer, 1)
			go func() { answered <- exchange(t, s, waitCall, nil) }()
			waitSignal(t, entered, "the call to start")
			if end == "DELETE" {
				resp, err := http.DefaultClient.Do(s.newRequest(context.Background(), http.MethodDelete, ""))
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			} else {
				openHTTPSession(t, base) // past MaxSessions: the busy one is evicted
			}
			waitSignal(t, exited, "the call to be cancelled")
			got := waitSignal(t, answered, "the call's answer")
			if !strings.Contains(got.body, `"id":7`) {
				t.Errorf("the call's POST after its session's end: %d %q, want its answer", got.status, got.body)
			}
		})
	}
}

// callWaiting opens an HTTP session of a gateway whose tool wait waits,
// and leaves its call of wait (waitCall, id 7) running; release lets it
// return, exited says how it ended.
func callWaiting(t *testing.T) (s *httpSession, release chan struct{}, exited chan error) {
	t.Helper()
	reg := tool.NewRegistry()
	entered, release, exited := waitingTool(t, reg)
	g := newGateway(t, reg, Options{})
	s = openHTTPSession(t, serveHTTP(t, g, Options{}))
	s.sendAside(waitCall)
	waitSignal(t, entered, "the call to start")
	return s, release, exited
}
