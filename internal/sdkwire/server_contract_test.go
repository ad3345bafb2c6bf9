package sdkwire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Contract tests of the server side (assumptions 14–17): each checks one
// assumption of the package doc against the real SDK server. A failure
// after an SDK upgrade means the assumption broke and the code relying on
// it must change, not the test.

// rawResultMiddleware answers every tools/call with RawResult of what
// answer returns, as a server that answers tools/call itself does.
func rawResultMiddleware(answer func() (isError bool, content, structured string)) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			isError, content, structured := answer()
			var s json.RawMessage
			if structured != "" {
				s = json.RawMessage(structured)
			}
			session, _ := req.GetSession().(*mcp.ServerSession)
			return RawResult(session, isError, json.RawMessage(content), s), nil
		}
	}
}

// Assumption 14: the raw content reaches the client byte for byte, and the
// SDK still stamps and marshals the rest of the result.
func TestContractRawResult(t *testing.T) {
	// An unknown block (the SDK's client would refuse it), keys out of
	// order, digits a typed round trip would change, HTML characters.
	const content = `[{"type":"video","z":1,"a":1.50},{"type":"text","text":"<b>&amp;</b>","annotations":{"priority":1.0}}]`
	const structured = `{"n":1.50,"b":[]}`
	srv := newServer(nil)
	srv.AddReceivingMiddleware(rawResultMiddleware(func() (bool, string, string) { return true, content, structured }))
	for _, version := range []string{"", "2025-11-25"} { // "": negotiated, 2026-07-28
		t.Run("version "+version, func(t *testing.T) {
			table := NewTable(0)
			cs := connectInMemory(t, srv, nil, &mcp.ClientSessionOptions{ProtocolVersion: version}, func(tr mcp.Transport) mcp.Transport {
				return &CaptureTransport{Transport: tr, Table: table}
			})
			modern := cs.InitializeResult().ProtocolVersion >= "2026-07-28"
			if modern != (version == "") {
				t.Fatalf("negotiated %s", cs.InitializeResult().ProtocolVersion)
			}
			slot := NewSlot(CapturedCall)
			_, err := cs.CallTool(WithSlot(context.Background(), slot), &mcp.CallToolParams{Name: "raw"})
			table.Forget(slot)
			if !Captured(err) {
				t.Fatal(err)
			}
			raw, _ := slot.Result()
			var got struct {
				Content    json.RawMessage `json:"content"`
				Structured json.RawMessage `json:"structuredContent"`
				IsError    bool            `json:"isError"`
				ResultType string          `json:"resultType"`
				Meta       map[string]struct {
					Name string `json:"name"`
				} `json:"_meta"`
			}
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatalf("result %s: %v", raw, err)
			}
			if string(got.Content) != content {
				t.Errorf("content on the wire:\n %s\nwant the raw bytes\n %s\n(the SDK no longer marshals a middleware's result with encoding/json, or no longer calls its MarshalJSON)", got.Content, content)
			}
			if string(got.Structured) != structured || !got.IsError {
				t.Errorf("structuredContent %s, isError %v: want %s, true", got.Structured, got.IsError, structured)
			}
			if !modern {
				return
			}
			if got.ResultType != "complete" || got.Meta[mcp.MetaKeyServerInfo].Name != "contract" {
				t.Errorf("resultType %q, _meta %v: the SDK no longer stamps a result that embeds *mcp.CallToolResult; result %s", got.ResultType, got.Meta, raw)
			}
		})
	}
}

// Assumption 26: the SDK's own dispatch stamps resultType "complete"
// exactly where RawResult does.
func TestContractResultType(t *testing.T) {
	srv := newServer(nil)
	srv.AddTool(&mcp.Tool{Name: "typed", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}}, nil
		})
	for _, version := range []string{"", "2025-11-25", "2025-06-18"} {
		t.Run("version "+version, func(t *testing.T) {
			table := NewTable(0)
			var session *mcp.ServerSession
			cs := connectInMemory(t, srv, nil, &mcp.ClientSessionOptions{ProtocolVersion: version}, func(tr mcp.Transport) mcp.Transport {
				return &CaptureTransport{Transport: tr, Table: table}
			})
			for ss := range srv.Sessions() {
				session = ss // one session at a time: each subtest closes its own
			}
			slot := NewSlot(CapturedCall)
			_, err := cs.CallTool(WithSlot(context.Background(), slot), &mcp.CallToolParams{Name: "typed"})
			table.Forget(slot)
			if !Captured(err) {
				t.Fatal(err)
			}
			raw, _ := slot.Result()
			var sdk, ours struct {
				ResultType *string `json:"resultType"`
			}
			mine, err := json.Marshal(RawResult(session, false, json.RawMessage(`[]`), nil))
			if err != nil {
				t.Fatal(err)
			}
			if err := errors.Join(json.Unmarshal(raw, &sdk), json.Unmarshal(mine, &ours)); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(sdk.ResultType, ours.ResultType); diff != "" {
				t.Errorf("resultType (-SDK's dispatch +RawResult):\n%s\nthe SDK sent %s", diff, raw)
			}
		})
	}
}

// serveInMemory connects a client to srv over in-memory pipes, the
// server's transport through wrap; both ends close when the test ends, the
// client first.
func serveInMemory(t *testing.T, srv *mcp.Server, wrap func(mcp.Transport) mcp.Transport, sopts *mcp.ClientSessionOptions) (*mcp.ServerSession, *mcp.ClientSession) {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), wrap(st), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := newClient(nil).Connect(context.Background(), ct, sopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return ss, cs
}

// counter is a CountingTransport's Count that fails the test when the
// count goes below zero.
type counter struct {
	t *testing.T
	n atomic.Int64
}

func (c *counter) count(delta int) {
	if c.n.Add(int64(delta)) < 0 {
		c.t.Error("the count went below zero")
	}
}

// awaitSignal waits for a value on ch, at most waitLimit.
func awaitSignal[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// holdTool adds the tool hold to srv: it reports each call on entered and
// returns when release is closed or its context ends.
func holdTool(srv *mcp.Server, entered chan<- struct{}, release <-chan struct{}) *atomic.Bool {
	returned := new(atomic.Bool)
	srv.AddTool(&mcp.Tool{Name: "hold", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			defer returned.Store(true)
			entered <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "held"}}}, nil
		})
	return returned
}

// Assumption 15, answered calls: every tools/call request is read through
// Read and answered through Write with its id, whether it succeeds, fails
// as a protocol error, or was cancelled by the client.
func TestContractCallsAnsweredOnConnection(t *testing.T) {
	entered, release := make(chan struct{}, 8), make(chan struct{})
	srv := newServer(nil)
	holdTool(srv, entered, release)
	calls := &counter{t: t}
	_, cs := serveInMemory(t, srv, func(tr mcp.Transport) mcp.Transport {
		return &CountingTransport{Transport: tr, Method: "tools/call", Count: calls.count}
	}, nil)
	ctx := context.Background()

	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "nope"}); err == nil {
		t.Error("calling an unknown tool succeeded")
	}
	waitFor(t, "answered calls to stop counting", func() bool { return calls.n.Load() == 0 })

	held := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hold"})
		held <- err
	}()
	awaitSignal(t, entered, "the call to reach its handler")
	if n := calls.n.Load(); n != 1 {
		t.Errorf("a call in its handler counts %d, want 1", n)
	}
	release <- struct{}{} // this call only: the next one must wait for its cancellation
	if err := awaitSignal(t, held, "the held call to return"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the held call to stop counting", func() bool { return calls.n.Load() == 0 })

	// Cancelled by the client: the SDK still writes the handler's answer.
	cctx, cancel := context.WithCancel(ctx)
	cancelled := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "hold"})
		cancelled <- err
	}()
	awaitSignal(t, entered, "the call to reach its handler")
	cancel()
	if err := awaitSignal(t, cancelled, "the cancelled call to return"); !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled call returned %v", err)
	}
	waitFor(t, "the cancelled call's answer to be written", func() bool { return calls.n.Load() == 0 })
}

// Assumption 15, Close: ServerSession.Close waits for a handler in flight
// and drops its reply, so the reply never reaches Write.
func TestContractCloseDropsReplies(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	srv := newServer(nil)
	returned := holdTool(srv, entered, release)
	calls := &counter{t: t}
	var (
		mu      sync.Mutex
		callID  jsonrpc.ID
		written bool
	)
	// Pings from the server tell when Close has begun, so an older version.
	ss, cs := serveInMemory(t, srv, func(tr mcp.Transport) mcp.Transport {
		spy := &spyTransport{Transport: tr,
			read: func(msg jsonrpc.Message) {
				if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/call" {
					mu.Lock()
					callID = req.ID
					mu.Unlock()
				}
			},
			write: func(_ context.Context, msg jsonrpc.Message) {
				if resp, ok := msg.(*jsonrpc.Response); ok {
					mu.Lock()
					written = written || resp.ID == callID
					mu.Unlock()
				}
			},
		}
		return &CountingTransport{Transport: spy, Method: "tools/call", Count: calls.count}
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	ctx := context.Background()

	held := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hold"})
		held <- err
	}()
	awaitSignal(t, entered, "the call to reach its handler")
	if err := ss.Ping(ctx, nil); err != nil {
		t.Fatalf("the server's ping before Close: %v", err)
	}
	closed := make(chan struct{})
	go func() {
		ss.Close()
		close(closed)
	}()
	waitFor(t, "Close to begin (the server's pings fail)", func() bool { return ss.Ping(ctx, nil) != nil })
	select {
	case <-closed:
		// A ping written as Close began fails, and a failed write cancels
		// the handlers in flight: Close may then return, but only after
		// the handler did.
		if !returned.Load() {
			t.Fatal("ServerSession.Close returned with a handler in flight")
		}
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	select {
	case <-closed:
	case <-time.After(waitLimit):
		t.Fatal("ServerSession.Close did not return after the handler did")
	}
	if err := awaitSignal(t, held, "the call in flight at Close to return"); err == nil {
		t.Error("the call in flight at Close was answered")
	}
	mu.Lock()
	defer mu.Unlock()
	if written {
		t.Error("the reply of the handler in flight at Close reached Write: Close no longer drops replies, a graceful shutdown need not wait for them")
	}
	if n := calls.n.Load(); n != 0 {
		t.Errorf("%d calls still counted after Close, want 0", n)
	}
}

// stdioPeer is the client end of a stdio server session on pipes.
type stdioPeer struct {
	t     *testing.T
	w     *io.PipeWriter
	lines chan []byte // the server's lines
}

// serveStdio serves srv on pipes, through the transport mk builds on the
// session's input and output, to a stdioPeer; the pipes close when the
// test ends.
func serveStdio(t *testing.T, srv *mcp.Server, mk func(in io.ReadCloser, out io.WriteCloser) mcp.Transport) (*mcp.ServerSession, *stdioPeer) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ss, err := srv.Connect(context.Background(), mk(inR, outW), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &stdioPeer{t: t, w: inW, lines: make(chan []byte, 100)}
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			p.lines <- slices.Clone(sc.Bytes())
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		ss.Close()
		outR.Close()
		<-read
	})
	return ss, p
}

func (p *stdioPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.w, line+"\n"); err != nil {
		p.t.Fatalf("writing to the server: %v", err)
	}
}

// response waits for the response with the raw id, skipping other lines.
func (p *stdioPeer) response(id string) json.RawMessage {
	p.t.Helper()
	timeout := time.After(waitLimit)
	for {
		select {
		case line := <-p.lines:
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(line, &m) == nil && string(m.ID) == id && m.Method == "" {
				return line
			}
		case <-timeout:
			p.t.Fatalf("no response to %s", id)
		}
	}
}

// responses waits for the responses with the raw ids, in any order,
// skipping other lines; "batch" stands for a batch, a method for a
// notification.
func (p *stdioPeer) responses(ids ...string) {
	p.t.Helper()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	timeout := time.After(waitLimit)
	for len(want) > 0 {
		select {
		case line := <-p.lines:
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if bytes.HasPrefix(line, []byte("[")) {
				delete(want, "batch")
			} else if json.Unmarshal(line, &m) == nil && m.Method == "" {
				delete(want, string(m.ID))
			} else {
				delete(want, m.Method)
			}
		case <-timeout:
			p.t.Fatalf("no responses to %v", slices.Collect(maps.Keys(want)))
		}
	}
}

// initialize opens the session at version.
func (p *stdioPeer) initialize(version string) {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	p.response(`"init"`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// filteredStdio is a stdio reader through a LineFilter.
type filteredStdio struct {
	*LineFilter
	src io.Closer
}

func (f filteredStdio) Close() error { return f.src.Close() }

// paddedPing is a ping request of exactly n bytes.
func paddedPing(id string, n int) string {
	head := `{"jsonrpc":"2.0","id":` + id + `,"method":"ping","params":{"_meta":{"pad":"`
	const tail = `"}}}`
	return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
}

// Assumption 16, reading: IOTransport ends the session at the first line
// that is not a JSON-RPC message, and reads a line as long as its
// MaxLineLength; through a LineFilter of that length the session goes on.
func TestContractStdioBadLine(t *testing.T) {
	const maxLine = 512
	bad := []struct{ name, line string }{
		{"invalid JSON", "{oops"},
		{"empty batch", "[]"},
		{"not an object", "1"},
		{"neither request nor response", `{"jsonrpc":"2.0"}`},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"ping"}`},
		{"bad batch member", `[{"jsonrpc":"2.0","method":"notifications/initialized"},{"id":"x"}]`},
		{"too long", paddedPing("7", maxLine+1)},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			for _, filtered := range []bool{false, true} {
				var rejected atomic.Int32
				ss, p := serveStdio(t, newServer(nil), func(in io.ReadCloser, out io.WriteCloser) mcp.Transport {
					tr := &mcp.IOTransport{Reader: in, Writer: out, MaxLineLength: maxLine}
					if filtered {
						tr.Reader = filteredStdio{NewLineFilter(in, maxLine, func(json.RawMessage, *jsonrpc.Error) { rejected.Add(1) }), in}
					}
					return tr
				})
				ended := make(chan error, 1)
				go func() { ended <- ss.Wait() }()
				p.initialize("2025-03-26")       // batches allowed
				p.send(paddedPing("1", maxLine)) // the longest line read
				p.response("1")
				if filtered {
					p.send(tc.line)
					p.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
					p.response("2")
					if n := rejected.Load(); n != 1 {
						t.Errorf("filtered: %d lines rejected, want 1", n)
					}
					continue
				}
				// The session may end, closing its input, before it read the
				// whole line.
				io.WriteString(p.w, tc.line+"\n")
				select {
				case <-ended:
				case <-time.After(waitLimit):
					t.Fatalf("the session read %q and went on: IOTransport no longer ends it, LineFilter may go", tc.line)
				}
			}
		})
	}
}

// frameRecorder records each Write.
type frameRecorder struct {
	w      io.WriteCloser
	mu     sync.Mutex
	frames [][]byte
}

func (r *frameRecorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	r.frames = append(r.frames, slices.Clone(p))
	r.mu.Unlock()
	return r.w.Write(p)
}

func (r *frameRecorder) Close() error { return r.w.Close() }

// Assumption 16, writing: the SDK writes each frame (message or batch) in
// one Write call, whole and ending in a newline, even when calls, their
// progress and list_changed notifications are written at once.
func TestContractStdioFrameWrites(t *testing.T) {
	srv := newServer(nil)
	srv.AddTool(&mcp.Tool{Name: "progress", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for i := range 5 {
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i)})
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	rec := &frameRecorder{}
	_, p := serveStdio(t, srv, func(in io.ReadCloser, out io.WriteCloser) mcp.Transport {
		rec.w = out
		return &mcp.IOTransport{Reader: in, Writer: rec}
	})
	p.initialize("2025-03-26") // batches allowed
	var ids []string
	for i := range 8 {
		id := fmt.Sprint(10 + i)
		ids = append(ids, id)
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":` + id + `}}}`)
		if i == 3 {
			srv.AddTool(&mcp.Tool{Name: "late", InputSchema: json.RawMessage(`{"type":"object"}`)}, // list_changed
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{}, nil
				})
		}
	}
	p.send(`[{"jsonrpc":"2.0","id":30,"method":"ping"},{"jsonrpc":"2.0","id":31,"method":"tools/list"}]`)
	p.responses(append(ids, "batch", "notifications/tools/list_changed", "notifications/progress")...)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, f := range rec.frames {
		body, ok := bytes.CutSuffix(f, []byte("\n"))
		if !ok || bytes.Contains(body, []byte("\n")) {
			t.Errorf("a Write that is not one line: %q", f)
			continue
		}
		if body[0] == '[' {
			var batch []json.RawMessage
			if err := json.Unmarshal(body, &batch); err != nil {
				t.Errorf("a Write that is not one batch: %q", f)
			}
			continue
		}
		if _, err := jsonrpc.DecodeMessage(body); err != nil {
			t.Errorf("a Write that is not one message (%v): %q", err, f)
		}
	}
}

// listenMiddleware runs each subscriptions/listen handler under a context
// of its own, as a server tracking listens does, and hands its cancel
// function to started; ended receives the handler's return.
func listenMiddleware(started chan<- context.CancelCauseFunc, ended chan<- struct{}) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "subscriptions/listen" {
				return next(ctx, method, req)
			}
			ctx, cancel := context.WithCancelCause(ctx)
			defer cancel(nil)
			started <- cancel
			defer func() { ended <- struct{}{} }()
			return next(ctx, method, req)
		}
	}
}

// Assumption 17, parking: a 2026-07-28 client's subscriptions/listen
// reaches the receiving middleware and its handler parks until the context
// the middleware passes on is cancelled.
func TestContractListenParks(t *testing.T) {
	if !ParksUntilCancelled("subscriptions/listen") || ParksUntilCancelled("tools/call") {
		t.Fatal("ParksUntilCancelled names the wrong methods")
	}
	started, ended := make(chan context.CancelCauseFunc, 1), make(chan struct{}, 1)
	srv := newServer(nil)
	srv.AddReceivingMiddleware(listenMiddleware(started, ended))
	cs := connectInMemory(t, srv, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {}}, nil, nil)
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s, want 2026-07-28", v)
	}
	var cancel context.CancelCauseFunc
	select {
	case cancel = <-started:
	case <-time.After(waitLimit):
		t.Fatal("no subscriptions/listen reached the middleware")
	}
	select {
	case <-ended:
		t.Fatal("the listen handler returned at once: it no longer parks, tracking listens is not needed")
	case <-time.After(200 * time.Millisecond):
	}
	cancel(errors.New("the session is closing"))
	select {
	case <-ended:
	case <-time.After(waitLimit):
		t.Fatal("the listen handler did not return when the middleware's context was cancelled")
	}
}

// Assumption 17, Close: ServerSession.Close cancels only the listens it
// knew of when it began, and waits for a listen that arrives while it
// closes until the middleware's context is cancelled.
//
// The listen is read before Close begins and handled after: a notification
// held in the middleware holds the handler queue (notifications are handled
// in order, one at a time) until Close has begun, which the server's pings
// tell (they fail from then on).
func TestContractListenMissedByClose(t *testing.T) {
	started, ended := make(chan context.CancelCauseFunc, 1), make(chan struct{}, 1)
	holding, hold := make(chan struct{}), make(chan struct{})
	srv := newServer(nil)
	srv.AddReceivingMiddleware(listenMiddleware(started, ended), func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/roots/list_changed" {
				close(holding)
				<-hold
			}
			return next(ctx, method, req)
		}
	})
	methods := make(chan string, 16) // what the server read
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), &spyTransport{Transport: st, read: func(msg jsonrpc.Message) {
		if req, ok := msg.(*jsonrpc.Request); ok {
			select {
			case methods <- req.Method:
			default:
			}
		}
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	var closing sync.Once
	closeSession := func() {
		closing.Do(func() {
			go func() {
				ss.Close()
				close(closed)
			}()
		})
	}
	t.Cleanup(func() {
		select {
		case <-hold:
		default:
			close(hold)
		}
		select {
		case cancel := <-started:
			cancel(nil)
		default:
		}
		closeSession()
		select {
		case <-closed:
		case <-time.After(waitLimit):
			t.Error("the server session did not close")
		}
	})
	peer := rawPeer(t, ct)
	readUntil := func(method string) {
		t.Helper()
		for {
			select {
			case m := <-methods:
				if m == method {
					return
				}
			case <-time.After(waitLimit):
				t.Fatalf("the server did not read %s", method)
			}
		}
	}

	peer.call(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	peer.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	peer.send(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	awaitSignal(t, holding, "the notification to be held")
	peer.send(`{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	// Read after the listen: the listen was accepted.
	peer.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`)
	readUntil("notifications/cancelled")
	ctx := context.Background()
	if err := ss.Ping(ctx, nil); err != nil {
		t.Fatalf("the server's ping before Close: %v", err)
	}
	closeSession()
	waitFor(t, "Close to begin (the server's pings fail)", func() bool { return ss.Ping(ctx, nil) != nil })
	close(hold)

	var cancel context.CancelCauseFunc
	select {
	case cancel = <-started:
	case <-closed:
		t.Fatal("Close returned, the listen unhandled: the SDK now refuses a listen arriving while it closes; the gateway's listen tracking may go")
	case <-time.After(waitLimit):
		t.Fatal("neither the listen was handled nor did Close return")
	}
	select {
	case <-closed:
		t.Fatal("Close returned with the listen in flight: the SDK now cancels a listen arriving while it closes; the gateway's listen tracking may go")
	case <-time.After(200 * time.Millisecond):
	}
	cancel(errors.New("the session is closing"))
	select {
	case <-closed:
	case <-time.After(waitLimit):
		t.Fatal("Close did not return once the listen was cancelled")
	}
	awaitSignal(t, ended, "the listen handler to return")
}

// rawClient is a client connection that writes what it is told and
// answers the server's requests with an empty result.
type rawClient struct {
	t    *testing.T
	conn mcp.Connection
	resp chan *jsonrpc.Response
}

// rawPeer connects a rawClient on t; it closes when the test ends.
func rawPeer(t *testing.T, tr mcp.Transport) *rawClient {
	t.Helper()
	conn, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := &rawClient{t: t, conn: conn, resp: make(chan *jsonrpc.Response, 16)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			msg, err := conn.Read(context.Background())
			if err != nil {
				return
			}
			switch m := msg.(type) {
			case *jsonrpc.Request:
				if m.IsCall() {
					conn.Write(context.Background(), &jsonrpc.Response{ID: m.ID, Result: json.RawMessage(`{}`)})
				}
			case *jsonrpc.Response:
				c.resp <- m
			}
		}
	}()
	t.Cleanup(func() {
		conn.Close()
		<-done
	})
	return c
}

func (c *rawClient) send(line string) {
	c.t.Helper()
	msg, err := jsonrpc.DecodeMessage([]byte(line))
	if err != nil {
		c.t.Fatal(err)
	}
	if err := c.conn.Write(context.Background(), msg); err != nil {
		c.t.Fatalf("writing %s: %v", line, err)
	}
}

// call sends a request and waits for a response.
func (c *rawClient) call(line string) *jsonrpc.Response {
	c.t.Helper()
	c.send(line)
	select {
	case r := <-c.resp:
		if r.Error != nil {
			c.t.Fatalf("%s: %v", line, r.Error)
		}
		return r
	case <-time.After(waitLimit):
		c.t.Fatalf("no response to %s", line)
		return nil
	}
}
