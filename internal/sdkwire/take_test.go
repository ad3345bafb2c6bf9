package sdkwire

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/serverwire"
)

// The edges of a TakingTransport's connection: a taken call whose id is in
// use goes unanswered (TestParityRepeatedIDUnanswered); a failing body's error is a JSON-RPC error (internal
// error unless it is one); a notifications/cancelled that names no taken
// call reaches the SDK; Connect's failure and the version check are the
// wrapped transport's.
func TestTakingTransportEdges(t *testing.T) {
	release := make(chan struct{})
	srv := newServer(nil)
	_, peer, _ := takingServer(t, srv, func(ctx context.Context, _ *mcp.ServerSession, p serverwire.CallParams) (json.RawMessage, error) {
		switch p.Meta["do"] {
		case "hold":
			<-release
			return textResult("held"), nil
		case "fail":
			return nil, errors.New("body failed")
		}
		return textResult("ok"), nil
	})
	peer.initialize("2025-11-25")
	peer.send(callLine("1", `{"name":"taken","_meta":{"do":"hold"}}`))
	for line, want := range map[string]string{
		callLine("2", `{"name":"taken","_meta":{"do":"fail"}}`): `"error":{"code":-32603,"message":"body failed"}`,
	} {
		var id struct{ ID json.RawMessage }
		json.Unmarshal([]byte(line), &id)
		if got := peer.call(line, string(id.ID)); !strings.Contains(string(got), want) {
			t.Errorf("%s: answered %s, want %s", line, got, want)
		}
	}
	close(release)
	if got := peer.response("1"); !strings.Contains(string(got), `"text":"held"`) {
		t.Errorf("the held call: %s", got)
	}
	for _, params := range []string{`{"requestId":99}`, `{"requestId":{"x":1}}`, `{"reason":"none"}`, `[]`} {
		peer.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":` + params + `}`)
	}
	if got := peer.call(callLine("3", `{"name":"echo"}`), "3"); !strings.Contains(string(got), `"text":"echo"`) {
		t.Errorf("the session after stray cancellations: %s", got)
	}

	fails := &TakingTransport{Transport: stubTransport{err: errors.New("no pipe")}}
	if _, err := fails.Connect(context.Background()); err == nil || err.Error() != "no pipe" {
		t.Errorf("Connect = %v, want the wrapped transport's error", err)
	}
	if !fails.SupportsProtocolVersion("2025-11-25") {
		t.Error("a transport without a version check refused a version")
	}
	only := &TakingTransport{Transport: versionTransport{only: "2025-06-18"}}
	if only.SupportsProtocolVersion("2025-11-25") || !only.SupportsProtocolVersion("2025-06-18") {
		t.Error("the wrapped transport's version check was not passed on")
	}
}

// A taken call runs on a worker an earlier call left idle: a burst of
// calls starts a goroutine each, at most maxIdleWorkers of them stay for
// the calls that follow, and they end with the connection.
func TestTakingTransportWorkers(t *testing.T) {
	const burst = maxIdleWorkers + 2
	mcptest.Eventually(t, waitLimit, func() bool { return idleWorkers() == 0 }, "the workers of earlier tests' connections to end")
	release := make(chan struct{})
	entered := make(chan struct{}, burst)
	var mu sync.Mutex
	ran := map[string]bool{} // goroutines that ran a call of the burst
	ss, peer, taking := takingServer(t, newServer(nil), func(_ context.Context, _ *mcp.ServerSession, p serverwire.CallParams) (json.RawMessage, error) {
		g := goroutineID()
		if p.Meta["do"] == "hold" {
			mu.Lock()
			ran[g] = true
			mu.Unlock()
			entered <- struct{}{}
			<-release
			return textResult("held"), nil
		}
		mu.Lock()
		defer mu.Unlock()
		if !ran[g] {
			return nil, errors.New("ran on goroutine " + g + ", not on an idle worker")
		}
		return textResult("reused"), nil
	})
	peer.initialize("2025-11-25")
	var ids []string
	for i := range burst {
		ids = append(ids, strconv.Itoa(i+1))
		peer.send(callLine(ids[i], `{"name":"taken","_meta":{"do":"hold"}}`))
	}
	for range burst {
		awaitSignal(t, entered, "the burst's calls to start")
	}
	close(release)
	peer.responses(ids...)
	mcptest.Eventually(t, waitLimit, func() bool { return idleWorkers() == maxIdleWorkers }, "%d idle workers (now %d)", maxIdleWorkers, idleWorkers())
	for i := range 3 {
		id := strconv.Itoa(burst + 1 + i)
		mcptest.Eventually(t, waitLimit, func() bool { return idleWorkers() == maxIdleWorkers }, "the worker to be idle again")
		if got := peer.call(callLine(id, `{"name":"taken"}`), id); !strings.Contains(string(got), `"text":"reused"`) {
			t.Fatalf("call %s: %s", id, got)
		}
	}
	if len(ran) != burst {
		t.Errorf("the burst ran on %d goroutines, want %d", len(ran), burst)
	}
	ss.Close()
	taking.Wait()
	if n := idleWorkers(); n != 0 {
		t.Errorf("%d workers still idle after Wait", n)
	}
}

// idleWorkers counts the goroutines parked in takingConn.next's select:
// workers a start can hand a call to (counting idle under the lock would
// also count a worker not yet waiting, which a start would pass by).
func idleWorkers() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, " [select]:") && strings.Contains(g, "sdkwire.(*takingConn).next(") {
			n++
		}
	}
	return n
}

// goroutineID is the number runtime.Stack gives the calling goroutine.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	f := strings.Fields(string(buf))
	return f[1]
}

// directConn is a DirectConn whose messages the test hands in and reads
// out.
type directConn struct {
	in   chan jsonrpc.Message
	out  chan jsonrpc.Message
	run  func(*jsonrpc.Request) bool
	done chan struct{}
	once sync.Once
}

func (c *directConn) Connect(context.Context) (mcp.Connection, error) { return c, nil }
func (c *directConn) SessionID() string                               { return "" }
func (c *directConn) TakeNow(run func(*jsonrpc.Request) bool)         { c.run = run }

func (c *directConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-c.in:
		return msg, nil
	case <-c.done:
		return nil, io.EOF
	}
}

func (c *directConn) Write(_ context.Context, msg jsonrpc.Message) error {
	c.out <- msg
	return nil
}

func (c *directConn) Close() error {
	c.once.Do(func() { close(c.done) })
	return nil
}

// response reads the next message the session writes, a response to id.
func (c *directConn) response(t *testing.T, id int64) *jsonrpc.Response {
	t.Helper()
	msg := awaitSignal(t, c.out, "a response")
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.ID.Raw() != id {
		t.Fatalf("the session wrote %#v, want the response to %d", msg, id)
	}
	return resp
}

// directCall is a tools/call request with id and params.
func directCall(t *testing.T, id int64, params string) *jsonrpc.Request {
	t.Helper()
	msg, err := DecodeMessage([]byte(callLine(strconv.FormatInt(id, 10), params)))
	if err != nil {
		t.Fatal(err)
	}
	return msg.(*jsonrpc.Request)
}

// A DirectConn runs the calls the take takes on the goroutine that
// received them, with the reply, cancellation and bookkeeping of a call
// the read loop takes; it leaves every other request to the read loop,
// and so a call whose id is in use, or that comes once the connection
// ended.
func TestTakingTransportTakeNow(t *testing.T) {
	c := &directConn{in: make(chan jsonrpc.Message), out: make(chan jsonrpc.Message, 8), done: make(chan struct{})}
	entered := make(chan struct{}, 1)
	taking := &TakingTransport{Transport: c, Take: func(req *jsonrpc.Request) TakenCall {
		p, ok := serverwire.ReadCallParams(req.Params)
		if req.Method != "tools/call" || !ok || p.Name != "taken" {
			return nil
		}
		return func(ctx context.Context) (json.RawMessage, error) {
			if p.Meta["do"] == "self" {
				// The call's own cancel is its body's, on its context
				// alone, not on one derived from it.
				cancel, ok := CallCancel(ctx)
				if _, derived := CallCancel(context.WithoutCancel(ctx)); !ok || derived {
					return textResult("CallCancel: " + strconv.FormatBool(ok) + " on the call's context, " + strconv.FormatBool(derived) + " on one derived"), nil
				}
				cancel(errors.New("cancelled by its body"))
				<-ctx.Done()
				return textResult("self: " + context.Cause(ctx).Error()), nil
			}
			if p.Meta["do"] == "hold" {
				entered <- struct{}{}
				<-ctx.Done()
				return textResult("cancelled: " + context.Cause(ctx).Error()), nil
			}
			return textResult("on " + goroutineID()), nil
		}
	}}
	ss, err := newServer(nil).Connect(context.Background(), taking, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.run == nil {
		t.Fatal("Connect did not give the DirectConn its run")
	}
	init, _ := DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"0"}}}`))
	c.in <- init
	c.response(t, 1)

	if !c.run(directCall(t, 2, `{"name":"taken"}`)) {
		t.Fatal("a call the take takes was not run")
	}
	if got, want := string(c.response(t, 2).Result), `"text":"on `+goroutineID()+`"`; !strings.Contains(got, want) {
		t.Errorf("the call answered %s, want it run on the caller's goroutine (%s)", got, want)
	}
	if c.run(directCall(t, 3, `{"name":"echo"}`)) {
		t.Error("a call the take leaves was run")
	}
	if !c.run(directCall(t, 6, `{"name":"taken","_meta":{"do":"self"}}`)) {
		t.Fatal("a call the take takes was not run")
	}
	if got := string(c.response(t, 6).Result); !strings.Contains(got, `"text":"self: cancelled by its body"`) {
		t.Errorf("a call that cancelled itself with CallCancel answered %s", got)
	}
	notice, _ := DecodeMessage([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`))
	if c.run(notice.(*jsonrpc.Request)) {
		t.Error("a notification was run")
	}

	held := make(chan bool)
	go func() { held <- c.run(directCall(t, 4, `{"name":"taken","_meta":{"do":"hold"}}`)) }()
	awaitSignal(t, entered, "the held call to start")
	if c.run(directCall(t, 4, `{"name":"taken"}`)) {
		t.Error("a call whose id is in use was run")
	}
	cancel, _ := DecodeMessage([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}`))
	c.in <- cancel
	if got := string(c.response(t, 4).Result); !strings.Contains(got, ErrCancelled.Error()) {
		t.Errorf("the held call answered %s, want it cancelled by the client", got)
	}
	if !awaitSignal(t, held, "the held call to return") {
		t.Error("the held call was not run")
	}

	ss.Close()
	taking.Wait()
	if c.run(directCall(t, 5, `{"name":"taken"}`)) {
		t.Error("a call was run after the connection ended")
	}
}

// A taken call ends with its connection, whichever goroutine runs it (a
// worker of the read loop's, or a DirectConn's caller) and even when it
// starts as the connection ends: its cause is the first end's, whatever
// ends the connection again, and its reply is dropped.
func TestTakenCallsEndWithTheirConnection(t *testing.T) {
	c := &directConn{in: make(chan jsonrpc.Message), out: make(chan jsonrpc.Message, 8), done: make(chan struct{})}
	entered, causes := make(chan struct{}, 3), make(chan error, 3)
	taking := &TakingTransport{Transport: c, Take: func(*jsonrpc.Request) TakenCall {
		return func(ctx context.Context) (json.RawMessage, error) {
			entered <- struct{}{}
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return textResult("late"), nil
		}
	}}
	conn, err := taking.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tc := conn.(*takingConn)
	go c.run(directCall(t, 1, `{"name":"taken"}`))
	awaitSignal(t, entered, "the direct call to start")
	tc.start(directCall(t, 2, `{"name":"taken"}`), tc.take(nil))
	awaitSignal(t, entered, "the worker's call to start")
	first := errors.New("first end")
	tc.end(first)
	tc.end(errors.New("second end"))
	tc.start(directCall(t, 3, `{"name":"taken"}`), tc.take(nil))
	for range 3 {
		if err := awaitSignal(t, causes, "a taken call to end"); err != first {
			t.Errorf("a taken call ended with %v, want the first end's cause", err)
		}
	}
	taking.Wait()
	select {
	case msg := <-c.out:
		t.Errorf("the connection wrote %#v after it ended", msg)
	default:
	}
}

// BenchmarkTakeNowParallel is the bookkeeping of a taken call on a
// DirectConn, 64 callers at a time on one connection: its context, its
// entry in the calls in flight, its end and reply.
func BenchmarkTakeNowParallel(b *testing.B) {
	c := &directConn{in: make(chan jsonrpc.Message), out: make(chan jsonrpc.Message, 64), done: make(chan struct{})}
	go func() {
		for range c.out {
		}
	}()
	result := textResult("ok")
	taking := &TakingTransport{Transport: c, Take: func(*jsonrpc.Request) TakenCall {
		return func(context.Context) (json.RawMessage, error) { return result, nil }
	}}
	conn, err := taking.Connect(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		conn.Close()
		taking.Wait()
		close(c.out)
	}()
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(32)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id, _ := jsonrpc.MakeID(float64(next.Add(1)))
			if !c.run(&jsonrpc.Request{ID: id, Method: "tools/call", Params: json.RawMessage(`{"name":"taken"}`)}) {
				b.Error("the call was not taken")
				return
			}
		}
	})
}

// A peer that sends taken calls without end (each holds a goroutine until
// it returns) gets MaxTakenCalls of them run and the rest refused at once,
// with an error saying why; once some end, calls are taken again.
func TestTakenCallsBoundedPerConnection(t *testing.T) {
	c := &directConn{in: make(chan jsonrpc.Message), out: make(chan jsonrpc.Message, 8), done: make(chan struct{})}
	release := make(chan struct{})
	var started atomic.Int32
	taking := &TakingTransport{Transport: c, Take: func(*jsonrpc.Request) TakenCall {
		return func(ctx context.Context) (json.RawMessage, error) {
			started.Add(1)
			select {
			case <-release:
			case <-ctx.Done():
			}
			return textResult("ok"), nil
		}
	}}
	conn, err := taking.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { conn.Close(); taking.Wait() }()
	go func() {
		for {
			if _, err := conn.Read(context.Background()); err != nil {
				return
			}
		}
	}()
	for i := range MaxTakenCalls + 1 {
		c.in <- directCall(t, int64(i+1), `{"name":"taken"}`)
	}
	var refused jsonrpc.Message
	select {
	case refused = <-c.out:
	case <-time.After(waitLimit):
		close(release)
		t.Fatalf("no call of %d was refused", MaxTakenCalls+1)
	}
	if r, ok := refused.(*jsonrpc.Response); !ok || r.Error == nil || !strings.Contains(r.Error.Error(), "too many requests in flight on this connection") || r.ID.Raw() != int64(MaxTakenCalls+1) {
		t.Fatalf("the call past the bound got %#v, want it refused", refused)
	}
	close(release)
	mcptest.Eventually(t, waitLimit, func() bool { return started.Load() == MaxTakenCalls }, "the calls taken to start")
	for range MaxTakenCalls {
		<-c.out
	}
	c.in <- directCall(t, MaxTakenCalls+2, `{"name":"taken"}`)
	if r, ok := (<-c.out).(*jsonrpc.Response); !ok || r.Error != nil {
		t.Errorf("a call once the others ended: %#v", r)
	}
}
