package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpbridge/mcpbridge/internal/serverwire"
	"github.com/mcpbridge/mcpbridge/tool"
	"github.com/mcpbridge/mcpbridge/toolview"
)

// sdkPathSession is the Mcp-Session-Id a stateless test POST sends to
// have the SDK answer it: the take takes no stateless POST naming a
// session, and the SDK's stateless handler reads none.
const sdkPathSession = "sdk-path"

// postStateless posts body to a stateless gateway at base as a 2025-11-25
// client does, through the SDK's path when sdkPath; the response is the
// caller's.
func postStateless(ctx context.Context, t *testing.T, base, body string, sdkPath bool, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if sdkPath {
		req.Header.Set("Mcp-Session-Id", sdkPathSession)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		t.Fatal(err)
	}
	return resp
}

// readStateless posts body and returns the status, the whole body and
// the header of the response.
func readStateless(t *testing.T, base, body string, sdkPath bool, header ...string) (int, string, http.Header) {
	t.Helper()
	resp := postStateless(context.Background(), t, base, body, sdkPath, header...)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header
}

// statelessParity serves a stateless gateway of the taken and asking
// tools, and the SDK's own handler beside it on the same gateway; it
// returns the gateway, its count of calls the SDK's session served, and
// the two base URLs.
func statelessParity(t *testing.T) (g *Gateway, viaSDK *atomic.Int64, base, ref string) {
	t.Helper()
	reg := takenTools(t)
	askingTools(t, reg)
	g = newGateway(t, reg, Options{Stateless: true})
	viaSDK = sdkCalls(g)
	return g, viaSDK, serveHTTP(t, g, Options{}), sdkReferenceOf(t, g, true)
}

// askingTools registers tools that put a backend's questions to the
// client and answer what came back, or the error.
func askingTools(t *testing.T, reg *tool.Registry) {
	t.Helper()
	for name, method := range map[string]string{"roots": tool.AskRoots, "sample": tool.AskSample, "elicit": tool.AskElicit} {
		params := `{}`
		if method == tool.AskSample {
			params = `{"messages":[],"maxTokens":1}`
		}
		if method == tool.AskElicit {
			params = `{"message":"m","requestedSchema":{"type":"object"}}`
		}
		if _, err := reg.Register(goTool(name, func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
			answer, err := tool.AskFrom(ctx)(ctx, tool.Ask{Method: method, Params: json.RawMessage(params)})
			if err != nil {
				return tool.Output{Content: []tool.Content{tool.Text("failed: " + err.Error())}}, nil
			}
			return tool.Output{Content: []tool.Content{tool.Text(string(answer))}}, nil
		})); err != nil {
			t.Fatal(err)
		}
	}
}

// A stateless gateway answers a legacy client's call beneath the SDK's
// handler with the bytes the SDK writes for it: a result ready at once as
// the application/json body the SDK writes with JSONResponse, the same
// message; progress and log messages (from "info" up, the level of the
// SDK's session for the POST) as the SDK's SSE stream without event ids,
// byte for byte; a backend's questions answered as the SDK's session
// answers them (the client offers nothing, and a stateless server asks
// nothing).
func TestHTTPStatelessBytesAsSDK(t *testing.T) {
	_, sdk, base, ref := statelessParity(t)
	calls := append(slices.Clip(wireCalls), []wireCall{
		{`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"roots"}}`, false},
		{`{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"sample"}}`, false},
		{`{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"elicit"}}`, false},
	}...)
	for _, call := range calls {
		before := sdk.Load()
		status, got, gotHeader := readStateless(t, base, call.body, false)
		if sdk.Load() != before {
			t.Fatalf("the take left %s to the SDK", call.body)
		}
		wantStatus, want, wantHeader := readStateless(t, ref, call.body, true)
		if sdk.Load() != before+1 {
			t.Fatalf("the SDK's path did not serve %s", call.body)
		}
		if !call.stream {
			want = lastData(want)
			wantHeader = http.Header{}
			serverwire.SetResponseHeaders(wantHeader, true)
		}
		if status != wantStatus {
			t.Errorf("%s: status %d, the SDK's %d", call.body, status, wantStatus)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: the take's body differs from the SDK's (-SDK +taken):\n%s", call.body, diff)
		}
		for _, key := range []string{"Content-Type", "Cache-Control", "Connection", "Mcp-Session-Id"} {
			if gotHeader.Get(key) != wantHeader.Get(key) {
				t.Errorf("%s: header %s = %q, the SDK's %q", call.body, key, gotHeader.Get(key), wantHeader.Get(key))
			}
		}
	}
}

// What the gateway's own path does not take in stateless mode (the fast
// path leaves it to the SDK's handler; beneath the gateway's own
// transport the take leaves it to the SDK's session) is answered as the
// SDK's stateless handler answers it (sdkReferenceOf), status and body;
// what the take does not read takes the SDK's path in either build.
func TestHTTPStatelessLeavesTheRestToSDK(t *testing.T) {
	g := newGateway(t, takenTools(t), Options{Stateless: true})
	sdk := sdkCalls(g)
	base := serveHTTP(t, g, Options{})
	ref := sdkReferenceOf(t, g, true)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plain"}}`
	left := []struct {
		name         string
		body         string
		header       []string
		bySDKSession bool
	}{
		{"a session id", call, []string{"Mcp-Session-Id", "x"}, false},
		{"a per-request protocol version", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plain","_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}`, nil, true},
		{"a task", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plain","task":{}}}`, nil, true},
		{"Mcp-Name", call, []string{"Mcp-Name", "plain"}, false},
		{"a GET", "", []string{"Accept", "text/event-stream"}, false},
		{"a text body", call, []string{"Content-Type", "text/plain"}, false},
		{"Accept without SSE", call, []string{"Accept", "application/json"}, false},
		{"an unknown version", call, []string{"Mcp-Protocol-Version", "1999-01-01"}, false},
		{"a batch", "[" + call + "]", []string{"Mcp-Protocol-Version", "2025-03-26"}, false},
		{"2026-07-28 without _meta", call, perRequestHeaders("plain"), false},
		{"2026-07-28 of another tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plain","_meta":{` + perRequestMeta("") + `}}}`, perRequestHeaders("fails"), false},
	}
	for _, tt := range left {
		before := sdk.Load()
		got := statelessAnswer(t, base, tt.body, tt.header)
		if tt.bySDKSession && sdk.Load() != before+1 {
			t.Errorf("%s: the SDK's session did not serve it (answer %s)", tt.name, got.body)
		}
		want := statelessAnswer(t, ref, tt.body, tt.header)
		if diff := sameAnswer(got, want); diff != "" {
			t.Errorf("%s: the answer differs from the SDK's stateless handler's (-SDK +gateway):\n%s", tt.name, diff)
		}
	}
}

// statelessAnswer sends body as a stateless POST (a GET without one) to
// base with the extra headers, and returns the answer.
func statelessAnswer(t *testing.T, base, body string, header []string) httpAnswer {
	t.Helper()
	s := &httpSession{t: t, endpoint: base + "/mcp"}
	method := http.MethodPost
	if body == "" {
		method = http.MethodGet
	}
	extra := map[string]string{"Mcp-Protocol-Version": "2025-11-25"}
	for i := 0; i+1 < len(header); i += 2 {
		extra[header[i]] = header[i+1]
	}
	return request(t, s, method, body, extra)
}

// callsGate records the Calls it lets through.
type callsGate struct {
	mu    sync.Mutex
	calls []Call
}

func (c *callsGate) Enter(ctx context.Context, call Call) (context.Context, func(Outcome) error, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, call)
	return ctx, func(Outcome) error { return nil }, nil
}

// The Gate sees a stateless call alike on both paths: no session, no
// client name (the SDK's session for the POST has neither), the request's
// headers, _meta and arguments.
func TestHTTPStatelessGateSeesSameCall(t *testing.T) {
	gate := &callsGate{}
	g := newGateway(t, takenTools(t), Options{Stateless: true, Gate: gate})
	base := serveHTTP(t, g, Options{})
	ref := sdkReferenceOf(t, g, true)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plain","arguments":{"a":[1, 2]},"_meta":{"k":"v"}}}`
	readStateless(t, base, body, false, "X-Trace", "t")
	readStateless(t, ref, body, true, "X-Trace", "t")
	if len(gate.calls) != 2 {
		t.Fatalf("the Gate saw %d calls, want 2", len(gate.calls))
	}
	for i := range gate.calls {
		gate.calls[i].Header = gate.calls[i].Header.Clone()
		gate.calls[i].Header.Del("Mcp-Session-Id") // how the test picks the SDK's path
		gate.calls[i].Header.Del(streamHeader)     // each POST's own
		gate.calls[i].Header.Del("Content-Length")
	}
	if diff := cmp.Diff(gate.calls[1], gate.calls[0]); diff != "" {
		t.Errorf("the Gate's Call differs (-SDK +taken):\n%s", diff)
	}
	if c := gate.calls[0]; c.Session != "" || c.Client != "" || c.Header.Get("X-Trace") != "t" || c.Tool != "plain" {
		t.Errorf("the take's Call = %+v, want no session or client, the request's headers", c)
	}
}

// A stateless client that leaves mid-call has the call cancelled, as on
// the SDK's path (nothing to resume), and the call counts as a session
// while it runs.
func TestHTTPStatelessCancelledOnDisconnect(t *testing.T) {
	perRequestCall := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait","_meta":{` + perRequestMeta("") + `}}}`
	for _, tt := range []struct {
		name, body string
		header     []string
	}{{"2025-11-25", waitCall, nil}, {"2026-07-28", perRequestCall, perRequestHeaders("wait")}} {
		t.Run(tt.name, func(t *testing.T) {
			reg := tool.NewRegistry()
			entered, _, exited := waitingTool(t, reg)
			g := newGateway(t, reg, Options{Stateless: true})
			sdk := sdkCalls(g)
			base := serveHTTP(t, g, Options{})
			ctx, leave := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				if resp := postStateless(ctx, t, base, tt.body, false, tt.header...); resp != nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
			waitSignal(t, entered, "the call to start")
			if n := g.Sessions(); n != 1 {
				t.Errorf("Sessions() = %d while a stateless call runs, want 1", n)
			}
			leave()
			if err := waitSignal(t, exited, "the call to be cancelled"); !errors.Is(err, errStreamGone) {
				t.Errorf("the call ended with %v, want %v", err, errStreamGone)
			}
			<-done
			if n := sdk.Load(); n != 0 {
				t.Errorf("the SDK served %d calls, want 0", n)
			}
		})
	}
}

// blockingGate holds each call in Enter until the call's context ends,
// and says why it ended.
type blockingGate struct {
	entered chan struct{}
	ended   chan error
}

func (b *blockingGate) Enter(ctx context.Context, _ Call) (context.Context, func(Outcome) error, error) {
	b.entered <- struct{}{}
	<-ctx.Done()
	b.ended <- context.Cause(ctx)
	return nil, nil, ctx.Err()
}

// A stateless client that sends calls and leaves at once, while they wait
// to be admitted (for the gateway's readiness, or in the Gate), leaves
// nothing behind: each call ends with its POST and gives its slot back,
// where it would otherwise hold the slot until the wait ended (a minute
// and more), a cap filled without one connection kept open.
func TestHTTPStatelessCallLeftWhileAdmittedEnds(t *testing.T) {
	for _, tt := range []string{"readiness", "Gate"} {
		t.Run(tt, func(t *testing.T) {
			reg := tool.NewRegistry()
			waitingTool(t, reg)
			opts := Options{Stateless: true}
			gate := &blockingGate{entered: make(chan struct{}, 1), ended: make(chan error, 1)}
			if tt == "readiness" {
				opts.Ready = make(chan struct{}) // never ready
			} else {
				opts.Gate = gate
			}
			g := newGateway(t, reg, opts)
			base := serveHTTP(t, g, Options{})
			ctx, leave := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				if resp := postStateless(ctx, t, base, waitCall, false); resp != nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
			if tt == "readiness" {
				waitFor(t, "the call waiting for readiness", func() bool { return inFlight(g) == 1 })
			} else {
				waitSignal(t, gate.entered, "the call in the Gate")
			}
			leave()
			<-done
			if tt == "Gate" {
				if err := waitSignal(t, gate.ended, "the Gate's wait to end"); err == nil {
					t.Error("the Gate's context ended without a cause")
				}
			}
			waitFor(t, "the call's slot given back", func() bool { return inFlight(g) == 0 })
		})
	}
}

// A stateless POST served by the transport without serveMCP's watch of
// its client (its ServeHTTP behind the edge's screen alone) keeps its call
// off the POST's goroutine: only the watch would cancel a call running
// there, so a client that leaves would leave it running. It ends with the
// POST's session instead.
func TestHTTPStatelessUnwatchedCallEndsWithItsPOST(t *testing.T) {
	reg := tool.NewRegistry()
	entered, release, exited := waitingTool(t, reg)
	g := newGateway(t, reg, Options{Stateless: true})
	transport, ok := g.engine.(*httpTransport)
	if !ok {
		t.Skipf("the engine is %T, not the gateway's transport", g.engine)
	}
	srv := httptest.NewServer(g.screen(transport))
	defer srv.Close()
	defer close(release) // a call left running ends, so the server can close
	ctx, leave := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp := postStateless(ctx, t, srv.URL, waitCall, false); resp != nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	waitSignal(t, entered, "the call to start")
	leave()
	if err := waitSignal(t, exited, "the call to end with its POST"); err == nil {
		t.Error("the call ended without a cause")
	}
	<-done
}

// Stateless POSTs on the take pass the same edge: refused without
// the bearer token, and bounded by the gateway's call cap; but each has
// a session's cap of its own, as on the SDK's path, and the same request
// id in flight on two POSTs is no conflict.
func TestHTTPStatelessBounds(t *testing.T) {
	reg := tool.NewRegistry()
	entered, release, exited := waitingTool(t, reg)
	if _, err := reg.Register(goTool("plain", textBody("ran"))); err != nil {
		t.Fatal(err)
	}
	opts := Options{Stateless: true, BearerToken: "secret", MaxCalls: 2, MaxCallsPerSession: 1}
	g := newGateway(t, reg, opts)
	sdk := sdkCalls(g)
	base := serveHTTP(t, g, opts)
	ref := sdkReferenceOf(t, g, true)
	plain := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"plain"}}`
	if status, body, _ := readStateless(t, base, plain, false); status != http.StatusUnauthorized || strings.Contains(body, "ran") {
		t.Fatalf("a POST without the token: %d %s, want 401", status, body)
	}
	auth := []string{"Authorization", "Bearer secret"}
	var wg sync.WaitGroup
	for range 2 { // two calls in flight: within MaxCalls, each of its own session
		wg.Go(func() {
			_, body, _ := readStateless(t, base, waitCall, false, auth...)
			if !strings.Contains(body, "released") {
				t.Errorf("a waiting call answered %s", body)
			}
		})
		waitSignal(t, entered, "a call to start")
	}
	for _, sdkPath := range []bool{false, true} {
		on := base
		if sdkPath {
			on = ref
		}
		_, body, _ := readStateless(t, on, plain, sdkPath, auth...)
		if want := "too many tool calls in flight on the gateway"; !strings.Contains(body, want) {
			t.Errorf("a third call (SDK path: %v) answered %s, want %q", sdkPath, body, want)
		}
	}
	close(release)
	waitSignal(t, exited, "a call to end")
	waitSignal(t, exited, "a call to end")
	wg.Wait()
	if sdk.Load() != 1 {
		t.Errorf("the SDK served %d calls, want the one sent its way", sdk.Load())
	}
}

// In stateless mode a request is no session to count: calls in flight
// beyond MaxSessions, on either path, evict none of the others (each
// closed the request that began first, cancelling its call).
func TestHTTPStatelessCallsEvictNothing(t *testing.T) {
	reg := tool.NewRegistry()
	entered, release, exited := waitingTool(t, reg)
	g := newGateway(t, reg, Options{Stateless: true, MaxSessions: 1})
	base := serveHTTP(t, g, Options{})
	ref := sdkReferenceOf(t, g, true)
	var wg sync.WaitGroup
	for _, sdkPath := range []bool{true, true, false} {
		wg.Go(func() {
			on := base
			if sdkPath {
				on = ref
			}
			_, body, _ := readStateless(t, on, waitCall, sdkPath)
			if !strings.Contains(body, "released") {
				t.Errorf("a waiting call (SDK path: %v) answered %s", sdkPath, body)
			}
		})
		waitSignal(t, entered, "a call to start")
	}
	close(release)
	for range 3 {
		if err := waitSignal(t, exited, "a call to end"); err != nil {
			t.Errorf("a call ended with %v", err)
		}
	}
	wg.Wait()
}

// A stateless call belongs to a tool.Session of its own on either path
// (a share: session backend keys its connection by it), which ends once
// the call's response went out.
func TestHTTPStatelessCallSessionEnds(t *testing.T) {
	reg := tool.NewRegistry()
	sessions := make(chan tool.Session, 4)
	if _, err := reg.Register(goTool("session", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		sessions <- tool.SessionFrom(ctx)
		return tool.Output{Content: []tool.Content{tool.Text("ok")}}, nil
	})); err != nil {
		t.Fatal(err)
	}
	g := newGateway(t, reg, Options{Stateless: true})
	base := serveHTTP(t, g, Options{})
	ref := sdkReferenceOf(t, g, true)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"session"}}`
	for _, on := range []string{base, base, ref} {
		readStateless(t, on, call, on == ref)
	}
	var seen []tool.Session
	for range 3 {
		s := waitSignal(t, sessions, "a call")
		if s == nil {
			t.Fatal("a call belongs to no session")
		}
		waitSignal(t, s.Done(), "the call's session to end")
		seen = append(seen, s)
	}
	if seen[0] == seen[1] {
		t.Error("two stateless calls share a session")
	}
}

// With a view per session (tool search), a stateless call on the fast
// path gets a view of its own, as the SDK's path gives the POST's
// session: the search answers alike on both paths, the found tool runs
// by name, and no view is kept.
func TestHTTPStatelessView(t *testing.T) {
	reg, v, err := searchRegistry()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	var views atomic.Int64
	opts := Options{Stateless: true, NewView: func() View { views.Add(1); return v.NewSession() }}
	g := newGateway(t, reg, opts)
	sdk := sdkCalls(g)
	base := serveHTTP(t, g, opts)
	ref := sdkReferenceOf(t, g, true)
	search := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + toolview.SearchName + `","arguments":{"query":"open an issue on GitLab","limit":1}}}`
	_, got, _ := readStateless(t, base, search, false)
	_, want, _ := readStateless(t, ref, search, true)
	if diff := cmp.Diff(lastData(want), got); diff != "" {
		t.Errorf("the search answered otherwise on the take (-SDK +taken):\n%s", diff)
	}
	if !strings.Contains(got, glIssue) {
		t.Errorf("the search found %s, want %s", got, glIssue)
	}
	_, ran, _ := readStateless(t, base, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+glIssue+`"}}`, false)
	if !strings.Contains(ran, "ran "+glIssue) {
		t.Errorf("the found tool answered %s", ran)
	}
	if sdk.Load() != 1 || views.Load() != 3 {
		t.Errorf("the SDK served %d calls and %d views were made, want 1 and 3", sdk.Load(), views.Load())
	}
	if n := g.books()["views"]; n > 1 {
		t.Errorf("%d views kept after three requests, one at a time", n)
	}
}

// perRequestMeta is a 2026-07-28 request's _meta members of a client that
// offers nothing, with more.
func perRequestMeta(more string) string {
	return `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}` + more
}

// perRequestHeaders are the headers a 2026-07-28 call of name carries.
func perRequestHeaders(name string) []string {
	return []string{"Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", name}
}

// A 2026-07-28 client's call to a stateless gateway, from a client that
// offers nothing, is answered beneath the SDK's handler with the bytes
// the SDK writes: the result stamped with the server's name and
// "resultType":"complete", log messages at the level the request names
// (none without), progress, and the backend's questions answered as the
// SDK's session answers them.
func TestHTTPStatelessPerRequestBytesAsSDK(t *testing.T) {
	_, sdk, base, ref := statelessParity(t)
	info := `,"io.modelcontextprotocol/clientInfo":{"name":"c <&>","version":"1"}`
	calls := []struct {
		name, params string
		stream       bool
	}{
		{"plain", `"arguments":{},"_meta":{` + perRequestMeta(info) + `}`, false},
		{"fails", `"_meta":{` + perRequestMeta("") + `}`, false},
		{"structured", `"_meta":{"k":"v",` + perRequestMeta(info) + `}`, false},
		{"steps", `"_meta":{"progressToken":"tok",` + perRequestMeta("") + `}`, true},
		{"logs", `"_meta":{` + perRequestMeta(`,"io.modelcontextprotocol/logLevel":"warning"`) + `}`, true},
		{"logs", `"_meta":{` + perRequestMeta("") + `}`, false},
		{"roots", `"_meta":{` + perRequestMeta("") + `}`, false},
		{"sample", `"_meta":{` + perRequestMeta("") + `}`, false},
		{"elicit", `"_meta":{` + perRequestMeta("") + `}`, false},
	}
	for i, call := range calls {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,%s}}`, i, call.name, call.params)
		before := sdk.Load()
		status, got, gotHeader := readStateless(t, base, body, false, perRequestHeaders(call.name)...)
		if sdk.Load() != before {
			t.Fatalf("the take left %s to the SDK", body)
		}
		before = sdk.Load()
		wantStatus, want, wantHeader := readStateless(t, ref, body, true, perRequestHeaders(call.name)...)
		if sdk.Load() != before+1 {
			t.Fatalf("the SDK's path did not serve %s", body)
		}
		if !call.stream {
			want = lastData(want)
			wantHeader = http.Header{}
			serverwire.SetResponseHeaders(wantHeader, true)
		}
		if status != wantStatus {
			t.Errorf("%s: status %d, the SDK's %d", body, status, wantStatus)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: the take's body differs from the SDK's (-SDK +taken):\n%s", body, diff)
		}
		for _, key := range []string{"Content-Type", "Cache-Control", "Connection", "Mcp-Session-Id"} {
			if gotHeader.Get(key) != wantHeader.Get(key) {
				t.Errorf("%s: header %s = %q, the SDK's %q", body, key, gotHeader.Get(key), wantHeader.Get(key))
			}
		}
	}
}

// requestStates are the requestState members of input-required results,
// which differ from call to call.
var requestStates = regexp.MustCompile(`"requestState":"[^"]*"`)

// A 2026-07-28 client that offers roots, sampling or elicitation (as the
// go-sdk's client offers roots) has its call's first round answered
// beneath the SDK's handler too, with the bytes the SDK writes: a result,
// or the backend's questions as an input-required result whose
// requestState, brought back with the answers, finishes the call as the
// SDK's path finishes its own.
func TestHTTPStatelessPerRequestOfferingClientAsSDK(t *testing.T) {
	_, sdk, base, ref := statelessParity(t)
	offering := func(caps, more string) string {
		return `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + more
	}
	const roots = `{"roots":{"listChanged":true}}`
	calls := []struct {
		name, meta, answer string
		stream             bool
	}{
		{"plain", offering(roots, `,"io.modelcontextprotocol/clientInfo":{"name":"go-sdk","version":"1"}`), "", false},
		{"structured", offering(`{"sampling":{},"elicitation":{}}`, ""), "", false},
		{"steps", `"progressToken":"tok",` + offering(roots, ""), "", true},
		{"logs", offering(roots, `,"io.modelcontextprotocol/logLevel":"warning"`), "", true},
		{"roots", offering(roots, ""), `{"roots":[{"uri":"file:///w","name":"<w>"}]}`, false},
		{"sample", offering(`{"sampling":{}}`, ""), `{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}`, false},
		{"elicit", offering(`{"elicitation":{"form":{}}}`, ""), `{"action":"accept","content":{}}`, false},
		{"roots", offering(`{"sampling":{}}`, ""), "", false}, // asks what the client does not offer
	}
	for i, call := range calls {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"_meta":{%s}}}`, i, call.name, call.meta)
		before := sdk.Load()
		status, got, _ := readStateless(t, base, body, false, perRequestHeaders(call.name)...)
		if sdk.Load() != before {
			t.Fatalf("the take left %s to the SDK", body)
		}
		wantStatus, want, _ := readStateless(t, ref, body, true, perRequestHeaders(call.name)...)
		if !call.stream {
			want = lastData(want)
		}
		if status != wantStatus {
			t.Errorf("%s: status %d, the SDK's %d", body, status, wantStatus)
		}
		if diff := cmp.Diff(requestStates.ReplaceAllString(want, `"requestState":"S"`), requestStates.ReplaceAllString(got, `"requestState":"S"`)); diff != "" {
			t.Errorf("%s: the take's body differs from the SDK's (-SDK +taken):\n%s", body, diff)
		}
		if call.answer == "" {
			continue
		}
		if !strings.Contains(got, `"resultType":"input_required"`) {
			t.Fatalf("%s: answered %s, want the backend's question", body, got)
		}
		gotEnd := answerStateless(t, base, false, got, call.name, call.meta, call.answer)
		wantEnd := answerStateless(t, ref, true, want, call.name, call.meta, call.answer)
		if gotEnd != wantEnd || !strings.Contains(gotEnd, `"resultType":"complete"`) {
			t.Errorf("%s: the taken call ended with %s, the SDK's with %s", body, gotEnd, wantEnd)
		}
	}
}

// answerStateless brings answer back for the one question of asked, an
// input-required result of a call of name at base (posted as
// postStateless does), and returns the message the call answers then.
func answerStateless(t *testing.T, base string, sdkPath bool, asked, name, meta, answer string) string {
	t.Helper()
	var msg struct {
		Result struct {
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			RequestState  string                     `json:"requestState"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(asked), &msg); err != nil || len(msg.Result.InputRequests) != 1 {
		t.Fatalf("not one question: %s (%v)", asked, err)
	}
	var key string
	for k := range msg.Result.InputRequests {
		key = k
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":%q,"requestState":%q,"inputResponses":{%q:%s},"_meta":{%s}}}`,
		name, msg.Result.RequestState, key, answer, meta)
	_, got, _ := readStateless(t, base, body, sdkPath, perRequestHeaders(name)...)
	if strings.Contains(got, "\ndata: ") {
		return lastData(got)
	}
	return got
}

// refusingGate refuses every call with its error, after recording it.
type refusingGate struct {
	callsGate
	err error
}

func (r *refusingGate) Enter(ctx context.Context, call Call) (context.Context, func(Outcome) error, error) {
	r.callsGate.Enter(ctx, call)
	return ctx, nil, r.err
}

// The Gate sees a 2026-07-28 call alike on both paths (the client's name
// from its request's _meta), and an error the SDK answers with an HTTP
// status of its own (invalid params: 400) is answered so on the take.
func TestHTTPStatelessPerRequestGateAndStatus(t *testing.T) {
	gate := &refusingGate{err: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no <such> thing"}}
	g := newGateway(t, takenTools(t), Options{Stateless: true, Gate: gate})
	sdk := sdkCalls(g)
	base := serveHTTP(t, g, Options{})
	ref := sdkReferenceOf(t, g, true)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plain","arguments":{"a":[1, 2]},"_meta":{"k":"v",` + perRequestMeta(`,"io.modelcontextprotocol/clientInfo":{"name":"cli","version":"2"}`) + `}}}`
	status, got, gotHeader := readStateless(t, base, body, false, perRequestHeaders("plain")...)
	wantStatus, want, wantHeader := readStateless(t, ref, body, true, perRequestHeaders("plain")...)
	if sdk.Load() != 1 {
		t.Fatalf("the SDK served %d calls, want 1 (the reference's)", sdk.Load())
	}
	if status != http.StatusBadRequest || status != wantStatus || got != want {
		t.Errorf("the take answered %d %s, the SDK %d %s", status, got, wantStatus, want)
	}
	for _, key := range []string{"Content-Type", "Cache-Control", "Connection"} {
		if gotHeader.Get(key) != wantHeader.Get(key) {
			t.Errorf("header %s = %q, the SDK's %q", key, gotHeader.Get(key), wantHeader.Get(key))
		}
	}
	calls := gate.calls
	if len(calls) != 2 {
		t.Fatalf("the Gate saw %d calls, want 2", len(calls))
	}
	for i := range calls {
		calls[i].Header = calls[i].Header.Clone()
		calls[i].Header.Del("Mcp-Session-Id")
		calls[i].Header.Del(streamHeader)
	}
	if diff := cmp.Diff(calls[1], calls[0]); diff != "" {
		t.Errorf("the Gate's Call differs (-SDK +taken):\n%s", diff)
	}
	if calls[0].Client != "cli" {
		t.Errorf("the Gate's Client = %q, want the request's clientInfo name", calls[0].Client)
	}
}

// 2026-07-28 calls the take cannot answer as the SDK would stay with
// the SDK.
func TestHTTPStatelessPerRequestLeavesTheRest(t *testing.T) {
	g := newGateway(t, takenTools(t), Options{Stateless: true})
	sdk := sdkCalls(g)
	base := serveHTTP(t, g, Options{})
	call := func(meta string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plain","_meta":{` + meta + `}}}`
	}
	left := []struct {
		name, body string
		header     []string
	}{
		{"a client offering more than questions", call(`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{},"experimental":{}}`), perRequestHeaders("plain")},
		{"no capabilities", call(`"io.modelcontextprotocol/protocolVersion":"2026-07-28"`), perRequestHeaders("plain")},
		{"no version in _meta", call(`"io.modelcontextprotocol/clientCapabilities":{}`), perRequestHeaders("plain")},
		{"another version in _meta", call(perRequestMeta("")[:51] + `2025-11-25","io.modelcontextprotocol/clientCapabilities":{}`), perRequestHeaders("plain")},
		{"Mcp-Name of another tool", call(perRequestMeta("")), perRequestHeaders("fails")},
		{"no Mcp-Method", call(perRequestMeta("")), []string{"Mcp-Protocol-Version", "2026-07-28", "Mcp-Name", "plain"}},
		{"a clientInfo with more", call(perRequestMeta(`,"io.modelcontextprotocol/clientInfo":{"name":"c","icons":[]}`)), perRequestHeaders("plain")},
		{"a log level not a string", call(perRequestMeta(`,"io.modelcontextprotocol/logLevel":1`)), perRequestHeaders("plain")},
		{"another protocol key", call(perRequestMeta(`,"io.modelcontextprotocol/other":1`)), perRequestHeaders("plain")},
		{"the tasks extension", call(`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`), perRequestHeaders("plain")},
	}
	for _, tt := range left {
		before := sdk.Load()
		// The SDK answers some before its dispatch, with an HTTP error.
		if status, body, _ := readStateless(t, base, tt.body, false, tt.header...); sdk.Load() != before+1 && status < 400 {
			t.Errorf("%s: the take took the call: %d %s", tt.name, status, body)
		}
	}
}

// The Mcp-Name check and the tasks extension read the body's name as the
// SDK reads a call, by its exact key ("NAME" is another member), so that
// a request cannot show a proxy in front of the gateway one name and run
// another; and a tasks-extension call whose arguments are not an object
// is left to the SDK's invalid params, as any call is, before it is
// admitted. The extension used to read the name in any case (NAME ran
// where the header said name), and admitted, gated and audited such
// arguments.
func TestCallNameAndArgumentsReadAsTheyRun(t *testing.T) {
	req := func(params string) *jsonrpc.Request {
		return &jsonrpc.Request{Method: "tools/call", Params: json.RawMessage(params)}
	}
	for _, tt := range []struct {
		header, params, want string
	}{
		{"allowed", `{"name":"allowed"}`, ""},
		{"allowed", `{"name":"allowed","NAME":"other"}`, ""},
		{"other", `{"name":"allowed","Name":"other"}`, "does not match body value 'allowed'"},
		{"allowed", `{"name":5}`, "failed to extract name"},
		{"allowed", `{"arguments":{}}`, "failed to extract name"},
	} {
		if got := nameHeaderProblem(tt.header, req(tt.params)); tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("Mcp-Name %q for %s: %q, want %q", tt.header, tt.params, got, tt.want)
		}
	}
	ext := `"_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	for args, want := range map[string]bool{`{}`: true, `null`: true, `{"a":1}`: true, `5`: false, `"x"`: false, `[1]`: false} {
		if _, ok := extCall(req(`{"name":"job","arguments":`+args+`,`+ext+`}`), nil); ok != want {
			t.Errorf("an extension call with arguments %s taken: %v, want %v", args, ok, want)
		}
	}
	if p, ok := extCall(req(`{"name":"job","NAME":"other_bg","arguments":{},`+ext+`}`), nil); !ok || p.Name != "job" {
		t.Errorf("an extension call with name and NAME reads %+v (%v), want the exact key's, job", p, ok)
	}
}

// A stateless gateway's answer to initialize names no session: no
// Mcp-Session-Id header at all, as the SDK's stateless handler answers.
// It used to send the header empty.
func TestHTTPStatelessInitializeNamesNoSession(t *testing.T) {
	g := newGateway(t, takenTools(t), Options{Stateless: true})
	base := serveHTTP(t, g, Options{})
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if v, present := resp.Header["Mcp-Session-Id"]; present || resp.StatusCode != http.StatusOK {
		t.Errorf("initialize: %s, Mcp-Session-Id %q (present %v); want 200 and no such header", resp.Status, v, present)
	}
}
