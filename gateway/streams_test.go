package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// httpSession is a raw Streamable HTTP client session on protocol
// 2025-11-25: what a client that may vanish mid-call does on the wire.
type httpSession struct {
	t        *testing.T
	endpoint string
	id       string // Mcp-Session-Id, "" in stateless mode
	token    string // the bearer credential sent, none if ""
}

// openHTTPSession opens a raw session whose client offers nothing.
func openHTTPSession(t *testing.T, base string) *httpSession {
	t.Helper()
	return openHTTPSessionWith(t, base, `{}`, "")
}

// openHTTPSessionWith opens a raw session on base's endpoint whose client
// offers capabilities (a JSON object), presenting token on each request
// when it is not "": initialize, its session id, notifications/initialized.
func openHTTPSessionWith(t *testing.T, base, capabilities, token string) *httpSession {
	t.Helper()
	s := &httpSession{t: t, endpoint: base + "/mcp", token: token}
	resp := s.post(context.Background(), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+capabilities+`,"clientInfo":{"name":"raw","version":"1"}}}`)
	s.id = resp.Header.Get("Mcp-Session-Id")
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	s.post(context.Background(), `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
	return s
}

func (s *httpSession) request(ctx context.Context, method, body string) *http.Response {
	s.t.Helper()
	return s.do(s.newRequest(ctx, method, body))
}

// send posts body from any goroutine; the response is the caller's.
func (s *httpSession) send(ctx context.Context, body string) (*http.Response, error) {
	return http.DefaultClient.Do(s.newRequest(ctx, http.MethodPost, body))
}

// sendAside posts body from a goroutine of its own and reads its answer
// to the end; the channel is closed once it has (or the POST failed).
func (s *httpSession) sendAside(body string) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := s.send(context.Background(), body); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	return done
}

func (s *httpSession) newRequest(ctx context.Context, method, body string) *http.Request {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.endpoint, r)
	if err != nil {
		panic(err) // the endpoint and method are the test's own
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	return req
}

func (s *httpSession) post(ctx context.Context, body string) *http.Response {
	return s.request(ctx, http.MethodPost, body)
}

func (s *httpSession) do(req *http.Request) *http.Response {
	s.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	if resp.StatusCode >= 300 {
		b, _ := io.ReadAll(resp.Body)
		s.t.Fatalf("%s %s: %s: %s", req.Method, req.URL, resp.Status, b)
	}
	return resp
}

// sseField returns the value of the first "name: " line of an SSE body.
func sseField(t *testing.T, body *bufio.Reader, name string) string {
	t.Helper()
	for {
		line, err := body.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the event stream for %q: %v", name, err)
		}
		if v, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), name+": "); ok {
			return v
		}
	}
}

// waitingTool registers "wait": it says when it started, waits for
// release or its cancellation, and reports its context's cause.
func waitingTool(t *testing.T, reg *tool.Registry) (entered chan struct{}, release chan struct{}, exited chan error) {
	entered, release, exited = make(chan struct{}, 1), make(chan struct{}), make(chan error, 1)
	if _, err := reg.Register(goTool("wait", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		entered <- struct{}{}
		select {
		case <-release:
			if ctx.Err() == nil { // released while still running
				exited <- nil
				return tool.Output{Content: []tool.Content{tool.Text("released")}}, nil
			}
			exited <- context.Cause(ctx)
			return tool.Output{}, ctx.Err()
		case <-ctx.Done():
			exited <- context.Cause(ctx)
			return tool.Output{}, ctx.Err()
		}
	})); err != nil {
		t.Fatal(err)
	}
	return entered, release, exited
}

const waitCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait"}}`

// graces makes g's resume graces fire only when the test calls them.
func graces(g *Gateway) <-chan func() {
	ch := make(chan func(), 256) // a grace per refused resume, too
	g.vanish.timer = func(_ time.Duration, f func()) { ch <- f }
	return ch
}

// An HTTP client that vanishes mid-call without notifications/cancelled:
// its call is cancelled (a backend gets notifications/cancelled) once it
// can no longer get the result: at once in stateless mode, when the
// resume grace ends on a resumable stream.
func TestVanishedHTTPClientsCallsCancelled(t *testing.T) {
	for _, mode := range []struct{ stateless, sdkPath bool }{{false, false}, {false, true}, {true, false}, {true, true}} {
		stateless := mode.stateless
		t.Run(fmt.Sprintf("stateless=%v,sdkPath=%v", stateless, mode.sdkPath), func(t *testing.T) {
			reg := tool.NewRegistry()
			entered, _, exited := waitingTool(t, reg)
			opts := Options{Stateless: stateless}
			g := newGateway(t, reg, opts)
			graces := graces(g)
			sdk := sdkCalls(g)
			s := openSessionOn(t, serveHTTP(t, g, opts), mode.sdkPath)
			ctx, leave := context.WithCancel(context.Background())
			call := waitCall
			if mode.sdkPath {
				call = sdkWaitCall // a member no take reads: the SDK's session serves it
			}
			// The response may not begin before the result: post it aside.
			go func() {
				if resp, err := s.send(ctx, call); err == nil {
					resp.Body.Close()
				}
			}()
			waitSignal(t, entered, "the call to start")
			leave()
			if !stateless {
				grace := waitSignal(t, graces, "the resume grace to start")
				if len(exited) != 0 {
					t.Fatal("the call ended before its grace did")
				}
				grace()
			}
			if cause := waitSignal(t, exited, "the call to be cancelled"); !errors.Is(cause, errStreamGone) {
				t.Errorf("the call ended with cause %v, want %v", cause, errStreamGone)
			}
			if took := sdk.Load() == 1; took != mode.sdkPath {
				t.Errorf("the SDK served the call: %v, want %v", took, mode.sdkPath)
			}
		})
	}
}

// A prompts/get (a resources/read goes the same way) whose client leaves
// before its backend answers ends with its stream, as a call does: the
// backend's request is cancelled and the session's call slot given back
// at once, not held until the backend answers or its timeout. Close ends
// it too, over HTTP and off it, where it used to wait its whole shutdown
// timeout for it. (On a stateless POST the
// POST's session ends with it as well: that mode guards the path, not
// the stream's tracking.)
func TestVanishedHTTPClientsOfferCancelled(t *testing.T) {
	const getHold = `{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"mcp__docs__hold"}}`
	for _, mode := range []struct {
		name                   string
		stateless, stop, stdio bool
	}{{"left", false, false, false}, {"left/stateless", true, false, false}, {"closed", false, true, false}, {"closed/stdio", false, true, true}} {
		t.Run(mode.name, func(t *testing.T) {
			reg := tool.NewRegistry()
			srv := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
			held, ended := make(chan struct{}, 1), make(chan struct{}, 1)
			srv.AddPrompt(&mcp.Prompt{Name: "hold"}, func(ctx context.Context, _ *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				held <- struct{}{}
				<-ctx.Done() // only a cancel ends it
				ended <- struct{}{}
				return nil, ctx.Err()
			})
			startMemBackendWith(t, mcpclient.Config{ServerName: "docs", Transport: mcpclient.TransportStdio, Command: "unused"},
				mcpclient.Options{Registry: reg}, srv)
			opts := Options{Stateless: mode.stateless}
			g := newGateway(t, reg, opts)
			graces := graces(g)
			ctx, leave := context.WithCancel(context.Background())
			defer leave()
			answered := make(chan error, 1)
			if mode.stdio {
				cs, _ := connectClient(t, g, mcp.NewClient(&mcp.Implementation{Name: "plain", Version: "1"}, nil), &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
				go func() {
					_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "mcp__docs__hold"})
					answered <- err
				}()
			} else {
				s := openHTTPSession(t, serveHTTP(t, g, opts))
				go func() {
					if resp, err := s.send(ctx, getHold); err == nil {
						resp.Body.Close()
					}
				}()
			}
			waitSignal(t, held, "the prompt held by its backend")
			switch {
			case mode.stop:
				if err := g.Close(); err != nil {
					t.Errorf("Close with a prompts/get in flight: %v", err)
				}
			case mode.stateless:
				leave()
			default:
				leave()
				waitSignal(t, graces, "the resume grace to start")()
			}
			waitSignal(t, ended, "the backend's request to be cancelled")
			waitFor(t, "the call slot given back", func() bool {
				g.mu.Lock()
				defer g.mu.Unlock()
				return g.slotsTaken() == 0
			})
			if mode.stdio && waitSignal(t, answered, "the prompt's answer") == nil {
				t.Error("the prompt was answered as if its backend had")
			}
		})
	}
}

// A call that still waits for the backends' first start when its client
// leaves is ended with its stream, as a call in flight is: it gives back
// its slot while the gateway is not ready, so it never runs for a client
// that left, however long the start takes. On the SDK's path the
// POST can end first (its write to the gone client fails): the waiting
// call still counts as the stream's. Any other request that waits for
// readiness (a tools/list) is ended the same way, and so is a call as a
// task, whose task would outlive the request but is never made.
func TestRequestWaitingForReadinessEndsWithItsStream(t *testing.T) {
	const (
		toolsList = `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`
		taskCall  = `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"wait","arguments":{},"task":{}}}`
	)
	for _, mode := range []struct {
		name, body string
		sdkPath    bool
	}{{"call", waitCall, false}, {"call/sdkPath", sdkWaitCall, true}, {"tools/list", toolsList, true}, {"task", taskCall, false}} {
		t.Run(mode.name, func(t *testing.T) {
			reg := tool.NewRegistry()
			waitingTool(t, reg)
			opts := Options{Ready: make(chan struct{})} // never ready
			g := newGateway(t, reg, opts)
			graces := graces(g)
			s := openSessionOn(t, serveHTTP(t, g, opts), mode.sdkPath)
			ctx, leave := context.WithCancel(context.Background())
			go func() {
				if resp, err := s.send(ctx, mode.body); err == nil {
					resp.Body.Close()
				}
			}()
			waitFor(t, "the request waiting for readiness, tracked", func() bool { return tracked(g) == 1 })
			leave()
			waitSignal(t, graces, "the resume grace to start")()
			// Its admission ends while the gateway is still not ready:
			// the call can no longer run.
			waitFor(t, "the waiting request ended with its stream", func() bool { return tracked(g) == 0 && inFlight(g) == 0 })
		})
	}
}

// A request that starts to wait once Close has begun is ended at once,
// saying the gateway is shutting down, not that its session is closing.
func TestWaitAfterCloseSaysShuttingDown(t *testing.T) {
	g := newGateway(t, tool.NewRegistry(), Options{Ready: make(chan struct{})})
	g.Close()
	ctx, end := g.awaitOn(context.Background(), nil, "s1")
	defer end()
	if cause := context.Cause(ctx); !errors.Is(cause, errClosing) {
		t.Errorf("a wait begun after Close ended with %v, want %v", cause, errClosing)
	}
	if err := g.awaitReadyOn(context.Background(), nil, nil, "s1", "tools/list"); !errors.Is(err, errClosing) {
		t.Errorf("a readiness wait begun after Close: %v, want %v", err, errClosing)
	}
}

// tracked counts what g tracks as calls in flight.
func tracked(g *Gateway) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.calls)
}

// openSessionOn opens a raw session whose calls the HTTP take serves,
// or with sdkPath one whose calls the SDK serves (stateless: whose POSTs
// name a session, which the SDK's stateless handler ignores).
func openSessionOn(t *testing.T, base string, sdkPath bool) *httpSession {
	if !sdkPath {
		return openHTTPSession(t, base)
	}
	s := openSDKPathSession(t, base)
	if s.id == "" {
		s.id = sdkPathSession
	}
	return s
}

// A client whose stream drops but who resumes it (GET with Last-Event-ID)
// within the grace keeps its call and gets the result on the resumed
// stream; if the resumed stream drops too, the call is cancelled after
// another grace.
func TestResumedHTTPStreamKeepsItsCall(t *testing.T) {
	for _, mode := range []struct{ dropsAgain, sdkPath bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		dropsAgain := mode.dropsAgain
		t.Run(fmt.Sprintf("dropsAgain=%v,sdkPath=%v", dropsAgain, mode.sdkPath), func(t *testing.T) {
			reg := tool.NewRegistry()
			entered, release, exited := waitingTool(t, reg)
			g := newGateway(t, reg, Options{})
			graces := graces(g)
			sdk := sdkCalls(g)
			s := openSessionOn(t, serveHTTP(t, g, Options{}), mode.sdkPath)
			ctx, leave := context.WithCancel(context.Background())
			call := waitCall
			if mode.sdkPath {
				call = sdkWaitCall // a member no take reads: the SDK's session serves it
			}
			resp := s.post(ctx, call)
			primed := sseField(t, bufio.NewReader(resp.Body), "id")
			waitSignal(t, entered, "the call to start")
			leave()
			resp.Body.Close()
			grace := waitSignal(t, graces, "the resume grace to start")

			getCtx, leaveAgain := context.WithCancel(context.Background())
			defer leaveAgain()
			get := s.newRequest(getCtx, http.MethodGet, "")
			get.Header.Set("Accept", "text/event-stream")
			get.Header.Set("Last-Event-ID", primed)
			got := make(chan *http.Response, 1)
			go func() { got <- resume(getCtx, get) }()
			waitFor(t, "the stream to be resumed", func() bool { return awaiting(g, s.id) == 0 })
			grace() // the first grace ends after the resume: nothing to give up
			if dropsAgain {
				leaveAgain()
				// The graces of refused resumes (409) come first and
				// find the newer drop not theirs to give up.
				cause := endWithGraces(t, graces, exited)
				if !errors.Is(cause, errStreamGone) {
					t.Errorf("the call ended with cause %v, want %v", cause, errStreamGone)
				}
				return
			}
			close(release)
			if cause := waitSignal(t, exited, "the call to end"); cause != nil {
				t.Fatalf("the resumed call was cancelled: %v", cause)
			}
			resumed := waitSignal(t, got, "the resumed stream")
			if resumed == nil {
				t.Fatal("the resume was never taken")
			}
			defer resumed.Body.Close()
			if data := sseField(t, bufio.NewReader(resumed.Body), "data"); !strings.Contains(data, `"released"`) {
				t.Errorf("resumed stream carried %s, want the call's result", data)
			}
			if took := sdk.Load() == 1; took != mode.sdkPath {
				t.Errorf("the SDK served the call: %v, want %v", took, mode.sdkPath)
			}
		})
	}
}

// resume sends the resuming GET until the SDK takes it, as a client does:
// the SDK refuses it (409) while the dropped POST's handler still holds
// the stream. nil when ctx ends first.
func resume(ctx context.Context, get *http.Request) *http.Response {
	for {
		resp, err := http.DefaultClient.Do(get)
		if err != nil {
			return nil
		}
		if resp.StatusCode != http.StatusConflict {
			return resp
		}
		resp.Body.Close()
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// endWithGraces runs each resume grace as it starts until the call
// exits, and returns the call's cause.
func endWithGraces(t *testing.T, graces <-chan func(), exited <-chan error) error {
	t.Helper()
	timeout := time.After(testTimeout)
	for {
		select {
		case grace := <-graces:
			grace()
		case cause := <-exited:
			return cause
		case <-timeout:
			t.Fatal("timed out waiting for a grace to cancel the call")
			return nil
		}
	}
}

// awaiting is how many dropped streams of session await a resume.
func awaiting(g *Gateway, session string) int {
	g.vanish.mu.Lock()
	defer g.vanish.mu.Unlock()
	return len(g.vanish.awaiting[session])
}

// A 2026-07-28 client (go-sdk, stateless HTTP: the POST is the request's
// whole life) that gives up on a call mid-way has it cancelled.
func TestNewProtocolClientLeavesMidCall(t *testing.T) {
	reg := tool.NewRegistry()
	entered, _, exited := waitingTool(t, reg)
	opts := Options{Stateless: true, ResumeGrace: time.Hour}
	base := serveHTTP(t, newGateway(t, reg, opts), opts)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("protocol %q, want 2026-07-28", v)
	}
	ctx, leave := context.WithCancel(context.Background())
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait"})
		called <- err
	}()
	waitSignal(t, entered, "the call to start")
	leave()
	if cause := waitSignal(t, exited, "the call to be cancelled"); cause == nil {
		t.Error("the call ended without a cause")
	}
	if err := waitSignal(t, called, "CallTool to return"); err == nil {
		t.Error("CallTool succeeded after its context was cancelled")
	}
}

// Close stops the timers of dropped streams and starts no more.
func TestCloseStopsStreamTimers(t *testing.T) {
	g := newGateway(t, tool.NewRegistry(), Options{})
	ran := make(chan struct{}, 2)
	g.vanish.later(time.Hour, func() { ran <- struct{}{} })
	g.giveUp("s") // remembers s for a minute, by a timer
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	g.vanish.later(0, func() { ran <- struct{}{} })
	g.vanish.mu.Lock()
	left := len(g.vanish.timers)
	g.vanish.mu.Unlock()
	if left != 0 {
		t.Errorf("%d timers pending after Close", left)
	}
	select {
	case <-ran:
		t.Error("a timer ran after Close")
	case <-time.After(50 * time.Millisecond): // a bound on a negative
	}
}

// TestInFlightOnCountsByStream: inFlightOn answers from the count of
// calls by stream that track and untrack keep, without a leftover once
// the calls end (a call untracked twice, or never tracked, counts once).
func TestInFlightOnCountsByStream(t *testing.T) {
	g := newGateway(t, tool.NewRegistry(), Options{})
	a := &inflight{stream: "s1", cancel: func(error) {}}
	b := &inflight{stream: "s1", cancel: func(error) {}}
	other := &inflight{cancel: func(error) {}}
	for _, c := range []*inflight{a, b, other} {
		if err := g.track(c); err != nil {
			t.Fatalf("track refused on an open gateway: %v", err)
		}
	}
	if !g.inFlightOn("s1") || g.inFlightOn("s2") || g.inFlightOn("") {
		t.Fatalf("inFlightOn: s1 %v, s2 %v, \"\" %v; want true, false, false", g.inFlightOn("s1"), g.inFlightOn("s2"), g.inFlightOn(""))
	}
	g.untrack(a)
	g.untrack(a)
	if !g.inFlightOn("s1") {
		t.Error("s1 has a call in flight still, but inFlightOn says none")
	}
	g.untrack(b)
	g.untrack(other)
	g.untrack(&inflight{stream: "s1"})
	if g.inFlightOn("s1") {
		t.Error("inFlightOn(s1) after its calls ended")
	}
	g.mu.Lock()
	left := len(g.onStream)
	g.mu.Unlock()
	if left != 0 {
		t.Errorf("%d streams counted after every call ended", left)
	}
}

// A POST's session watch joins serveMCP's watch of its client: told when
// the client leaves, whether it joined before or after, once; the POST's
// stream is given up on all the same.
func TestClientWatchTellsTheSession(t *testing.T) {
	g := newGateway(t, tool.NewRegistry(), Options{})
	for _, joinFirst := range []bool{true, false} {
		s := &wireSession{idle: time.Hour}
		s.startPOST()
		r, _ := http.NewRequest(http.MethodPost, "/mcp", nil)
		watch := &clientWatch{g: g, r: r, stream: fmt.Sprint("joined-", joinFirst)}
		post := &postWatch{s: s}
		if joinFirst {
			watch.join(post)
			watch.leave()
		} else {
			watch.leave()
			watch.join(post)
		}
		post.done()
		s.mu.Lock()
		posts := s.posts
		s.mu.Unlock()
		post.mu.Lock()
		left := post.left
		post.mu.Unlock()
		if !left || posts != 0 {
			t.Errorf("joined first %v: the session's watch was told %v, the session counts %d POSTs; want told, none", joinFirst, left, posts)
		}
		if !g.streamGone(watch.stream) {
			t.Errorf("joined first %v: the stream of a client that left is not given up on", joinFirst)
		}
	}
}

// A client that drops streamed POSTs and comes back with resume GETs, again
// and again, cannot make the gateway remember its streams for good: after
// a resume only the streams whose calls still run await another grace, a
// session awaits at most as many streams as the event store keeps to
// resume (the oldest is given up at once), and the session's end lets go
// of those it awaited. Each resume used to put back every stream the
// session ever dropped, with a timer each, and the session's end kept them.
func TestAwaitedStreamsBounded(t *testing.T) {
	reg := tool.NewRegistry()
	g := newGateway(t, reg, Options{ResumeGrace: time.Hour})
	base := serveHTTP(t, g, Options{})
	client := openRawHTTP(t, base, "")
	session := client.session
	for i := range 3 * eventStreamsPerSession {
		g.awaitResume(session, "drop"+strconv.Itoa(i))
	}
	if n := awaiting(g, session); n != eventStreamsPerSession {
		t.Errorf("after %d drops the session awaits %d streams, want %d", 3*eventStreamsPerSession, n, eventStreamsPerSession)
	}
	if !g.streamGone("drop0") || g.streamGone("drop"+strconv.Itoa(3*eventStreamsPerSession-1)) {
		t.Error("past the bound, the oldest drop is not the one given up")
	}
	get, _ := http.NewRequest(http.MethodGet, base+"/mcp", nil)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set("Mcp-Session-Id", session)
	get.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	get.Header.Set("Last-Event-ID", "nosuch")
	resp, err := http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := awaiting(g, session); n != 0 {
		t.Errorf("after a resume, %d streams without a call in flight still await one", n)
	}
	g.awaitResume(session, "last")
	client.do(http.MethodDelete).Body.Close()
	waitFor(t, "the ended session's awaited streams let go", func() bool { return awaiting(g, session) == 0 })
}
