package sdkwire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/projection"
	"github.com/mcpbridge/mcpbridge/internal/serverwire"
)

// Requests answered beneath the SDK's server session (assumption 25 of the
// package doc; what they read and write is package serverwire's): the SDK's server decodes every request's params two
// times over with a fresh 32 KiB-buffer decoder, hands it through two
// goroutines, and marshals the result twice. A server whose hot request is
// simple (a gateway's tools/call) answers it on the connection itself, and
// leaves the rest (the handshake, other methods, responses to the
// server's own requests, notifications) to the SDK.

// TakenCall is the body of a request taken from the SDK: it runs off the
// read loop (on a worker an earlier call left idle, else a new goroutine)
// with a context that ends when the client cancels the request
// (notifications/cancelled), the connection's read side ends, or the
// connection closes; it returns the response's result, or its error (a
// *jsonrpc.Error keeps its code).
type TakenCall func(ctx context.Context) (json.RawMessage, error)

// TakingTransport wraps the server side of a transport whose one
// connection carries a whole session (stdio, in-memory; not Streamable
// HTTP) and offers Take every request read from it: a request Take takes
// never reaches the SDK's session. A request whose id is in flight, taken
// or left to the session, goes unanswered, as the session leaves one
// (parity check P10).
type TakingTransport struct {
	Transport mcp.Transport
	// Take returns the body that answers req, or nil to leave req to the
	// SDK. It runs on the connection's read loop (and, on a DirectConn,
	// on the goroutines that receive requests, at the same time): it must
	// be quick. req is a call (it has an id); its params are valid JSON.
	Take func(req *jsonrpc.Request) TakenCall
	// Routes: the connection routes what a call sends by the request it
	// belongs to (an HTTP stream per POST), so each taken call's context
	// carries its id (TakenRequest). Off on stdio, which has one stream.
	Routes bool

	mu    sync.Mutex
	conns []*takingConn
}

// Connect connects the wrapped transport and takes requests on its
// connection.
func (t *TakingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	values := context.WithoutCancel(ctx)
	base, stop := context.WithCancelCause(values)
	tc := &takingConn{Connection: c, take: t.Take, routes: t.Routes, values: values, base: base, stop: stop,
		calls: make(map[jsonrpc.ID]context.CancelCauseFunc), left: make(map[jsonrpc.ID]struct{}), jobs: make(chan takenJob)}
	t.mu.Lock()
	t.conns = append(t.conns, tc)
	t.mu.Unlock()
	if d, ok := c.(DirectConn); ok {
		d.TakeNow(tc.takeNow)
	}
	return tc, nil
}

// A DirectConn is a connection that receives each request on a goroutine
// of its own (an HTTP request's), which can run a taken call itself: the
// request then skips the SDK's read loop and the worker, two goroutine
// hand-offs each way. TakingTransport.Connect gives it run, which runs a
// call request the take takes on the caller's goroutine, replying as the
// read loop's taken calls do, and reports true once it has; false, having
// done nothing, for a request the connection hands to Read as usual (the
// take leaves it, its id is in use, or the connection ended).
type DirectConn interface {
	mcp.Connection
	TakeNow(run func(req *jsonrpc.Request) bool)
}

// SupportsProtocolVersion keeps the wrapped transport's answer visible to
// the SDK; a transport without one supports every version.
func (t *TakingTransport) SupportsProtocolVersion(version string) bool {
	return supportsVersion(t.Transport, version)
}

// Wait waits until the taken calls of every connection have returned.
// The connection's Close cancels them but cannot wait (the SDK closes a
// connection under a lock its session's notifications take, assumption
// 25): the server waits here once its session is over.
func (t *TakingTransport) Wait() {
	t.mu.Lock()
	conns := t.conns
	t.mu.Unlock()
	for _, c := range conns {
		c.wg.Wait()
		c.workers.Wait()
	}
}

// errClosed ends the taken calls of a closed connection.
var errClosed = errors.New("the connection is closed")

// takingConn is a connection whose Read hands taken requests to their
// bodies.
type takingConn struct {
	mcp.Connection
	take   func(*jsonrpc.Request) TakenCall
	routes bool // the calls' contexts carry their ids
	// values is the parent of the calls' contexts: the connection's values,
	// never cancelled, so that a call's context does not register with a
	// parent all the calls share (one lock); end cancels the running calls
	// (calls) itself.
	values context.Context
	base   context.Context // the connection's: ends when it ends
	stop   context.CancelCauseFunc
	wg     sync.WaitGroup // taken calls running

	// Idle workers wait on jobs for the next taken call: a fresh goroutine
	// per call grew its stack through the call's JSON encoding every time
	// (runtime.copystack was a seventh of serve --stdio's CPU per call).
	jobs    chan takenJob
	workers sync.WaitGroup // workers alive; they exit once base ends

	mu    sync.Mutex
	calls map[jsonrpc.ID]context.CancelCauseFunc // taken calls running; guarded by mu
	left  map[jsonrpc.ID]struct{}                // calls left to the SDK's session, until it writes their response; guarded by mu
	idle  int                                    // workers waiting on jobs; guarded by mu
	ended bool                                   // the read side ended or Close ran: replies are dropped, as the SDK's are; guarded by mu
	cause error                                  // why it ended (base's cause); guarded by mu
}

// maxIdleWorkers bounds the workers a connection keeps between calls; a
// burst of more concurrent calls starts goroutines that end with it.
const maxIdleWorkers = 4

// takenJob is a taken call handed to a worker.
type takenJob struct {
	id  jsonrpc.ID
	run TakenCall
	ctx *takenCtx
}

// takenCtx is a taken call's context: its own cancellation over the
// connection's values (the connection's end cancels it through its
// cancel, not as a child), and, on a connection that routes, its
// request's id (TakenRequest), in one layer. Its cancel is the call's
// (CallCancel).
type takenCtx struct {
	context.Context
	id     jsonrpc.ID // invalid on a connection that does not route
	cancel context.CancelCauseFunc
}

func (c *takenCtx) Value(key any) any {
	if _, ok := key.(takenKey); ok && c.id.IsValid() {
		return c.id
	}
	return c.Context.Value(key)
}

// newCall returns the context of the taken call of request id.
func (c *takingConn) newCall(id jsonrpc.ID) *takenCtx {
	ctx, cancel := context.WithCancelCause(c.values)
	t := &takenCtx{Context: ctx, cancel: cancel}
	if c.routes {
		t.id = id
	}
	return t
}

// CallCancel returns the cancel of ctx when ctx is the very context a
// TakenCall was handed (not one derived from it), and reports whether it
// was: the call's own, which ends with it, so its body may cancel the
// call with it (with a cause of its own) instead of deriving a context
// to cancel, a layer that costs allocations and a registration with its
// parent on every call.
func CallCancel(ctx context.Context) (context.CancelCauseFunc, bool) {
	t, ok := ctx.(*takenCtx)
	if !ok {
		return nil, false
	}
	return t.cancel, true
}

// Read returns the next message the SDK serves.
func (c *takingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			// The SDK cancels its own calls when reading fails.
			c.end(err)
			return nil, err
		}
		req, ok := msg.(*jsonrpc.Request)
		switch {
		case !ok:
		case req.IsCall():
			inUse, full := c.inUseOrFull(req.ID)
			if inUse {
				// A repeat of an id in flight on either path goes
				// unanswered, as the SDK's session leaves one (parity
				// check P10): a response with the id would reach the
				// client as the first request's, whose own it would then
				// drop. Checked before take, which may hold resources
				// for the call it returns.
				continue
			}
			if full {
				// Each taken call holds a goroutine until it returns (a
				// tasks/result waits for its task): a peer sending them
				// without end is refused, not given one each; its other
				// requests too (take alone knows which it would take).
				c.reply(c.base, req.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("too many requests in flight on this connection (%d); retry when some have ended", MaxTakenCalls)})
				continue
			}
			if run := c.take(req); run != nil {
				c.start(req, run)
				continue
			}
			c.leave(req.ID)
		case req.Method == "notifications/cancelled":
			if c.cancel(req.Params) {
				continue
			}
		}
		return msg, nil
	}
}

// MaxTakenCalls bounds the taken calls in flight on one connection.
const MaxTakenCalls = 1024

// inUseOrFull reports whether a call in flight has id, taken or left to
// the SDK, and whether MaxTakenCalls taken calls are in flight. Only the
// read loop and takeNow add calls, and takeNow checks again as it adds
// one, so on the read loop a false answer holds until its next start (a
// connection hands the same id to both only when the client repeats it,
// which the HTTP transport refuses first).
func (c *takingConn) inUseOrFull(id jsonrpc.ID) (inUse, full bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inFlight(id), len(c.calls) >= MaxTakenCalls
}

// inFlight reports whether a call in flight has id, on either path. mu
// must be held.
func (c *takingConn) inFlight(id jsonrpc.ID) bool {
	_, taken := c.calls[id]
	_, left := c.left[id]
	return taken || left
}

// leave notes the call with id as the SDK's session's until it writes
// its response (assumption 15).
func (c *takingConn) leave(id jsonrpc.ID) {
	c.mu.Lock()
	c.left[id] = struct{}{}
	c.mu.Unlock()
}

// Write writes a message of the SDK's session. A response frees its
// request's id first, as the SDK frees it before writing: a client that
// uses the id again once answered is served.
func (c *takingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		delete(c.left, resp.ID)
		c.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

// start runs a taken call (its id is not in use: see inUseOrFull) on an idle
// worker, or on a new one when none waits.
func (c *takingConn) start(req *jsonrpc.Request, run TakenCall) {
	ctx := c.newCall(req.ID)
	c.mu.Lock()
	c.calls[req.ID] = ctx.cancel
	c.wg.Add(1)
	ended, cause := c.ended, c.cause
	c.mu.Unlock()
	if ended {
		ctx.cancel(cause) // Close ran meanwhile: the call starts ended
	}
	j := takenJob{id: req.ID, run: run, ctx: ctx}
	select {
	case c.jobs <- j:
	default:
		c.workers.Add(1)
		go c.work(j)
	}
}

// takeNow runs req on the caller's goroutine when the take takes it (see
// DirectConn), with the context, bookkeeping and reply of a call the read
// loop takes.
func (c *takingConn) takeNow(req *jsonrpc.Request) bool {
	if inUse, full := c.inUseOrFull(req.ID); !req.IsCall() || inUse || full {
		return false // the read loop answers it
	}
	run := c.take(req)
	if run == nil {
		return false
	}
	ctx := c.newCall(req.ID)
	c.mu.Lock()
	if c.inFlight(req.ID) || c.ended {
		// The read loop leaves a repeated id unanswered, the session's
		// end answers the rest.
		c.mu.Unlock()
		ctx.cancel(nil)
		return false
	}
	c.calls[req.ID] = ctx.cancel
	c.wg.Add(1)
	c.mu.Unlock()
	c.runJob(takenJob{id: req.ID, run: run, ctx: ctx})
	return true
}

// work runs j, then the calls handed to it while it waits idle.
func (c *takingConn) work(j takenJob) {
	defer c.workers.Done()
	for ok := true; ok; j, ok = c.next() {
		c.runJob(j)
	}
}

// runJob runs a taken call and replies to it.
func (c *takingConn) runJob(j takenJob) {
	defer c.wg.Done()
	result, err := j.run(j.ctx)
	c.mu.Lock()
	delete(c.calls, j.id)
	ended := c.ended
	c.mu.Unlock()
	j.ctx.cancel(nil)
	if !ended {
		c.write(c.base, j.id, result, err)
	}
}

// next waits idle for the next call, and reports false when the worker
// should end instead: enough others wait, or the connection ended.
func (c *takingConn) next() (takenJob, bool) {
	c.mu.Lock()
	if c.ended || c.idle >= maxIdleWorkers {
		c.mu.Unlock()
		return takenJob{}, false
	}
	c.idle++
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.idle--
		c.mu.Unlock()
	}()
	select {
	case j := <-c.jobs:
		return j, true
	case <-c.base.Done():
		return takenJob{}, false
	}
}

// reply writes, with ctx, the response to a request the take answers,
// unless the connection ended.
func (c *takingConn) reply(ctx context.Context, id jsonrpc.ID, result json.RawMessage, err error) {
	c.mu.Lock()
	ended := c.ended
	c.mu.Unlock()
	if !ended {
		c.write(ctx, id, result, err)
	}
}

// write writes, with ctx, the response to a request the take answers. A
// failed write is the session's to notice on its next read or write.
func (c *takingConn) write(ctx context.Context, id jsonrpc.ID, result json.RawMessage, err error) {
	c.Connection.Write(ctx, serverwire.Response(id, result, err))
}

// cancel cancels the taken call a notifications/cancelled names, and
// reports whether there was one.
func (c *takingConn) cancel(params json.RawMessage) bool {
	id, ok := cancelledID(params)
	if !ok {
		return false
	}
	c.mu.Lock()
	cancel, found := c.calls[id]
	c.mu.Unlock()
	if found {
		cancel(ErrCancelled)
	}
	return found
}

// takenKey keys the id of the taken call a context belongs to.
type takenKey struct{}

// TakenRequest returns the id of the taken call whose body ctx (or a
// context derived from it) belongs to: a connection that routes a
// message by the request it relates to (an HTTP stream) reads it in
// Write, where the SDK's own request key is out of reach.
func TakenRequest(ctx context.Context) (jsonrpc.ID, bool) {
	id, ok := ctx.Value(takenKey{}).(jsonrpc.ID)
	return id, ok && id.IsValid()
}

// WithRequest returns ctx carrying the request id TakenRequest reads: a
// receiving middleware tags a request the SDK serves with it, so that a
// routing connection finds what its handler sends as it finds a taken
// call's.
func WithRequest(ctx context.Context, id jsonrpc.ID) context.Context {
	return context.WithValue(ctx, takenKey{}, id)
}

// WithoutRequest returns ctx carrying no request id, whatever it carried:
// what is sent with it belongs to no request (the work of a task, which
// outlives the request that made it), and a routing connection sends it
// where it sends what belongs to none.
func WithoutRequest(ctx context.Context) context.Context {
	return context.WithValue(ctx, takenKey{}, jsonrpc.ID{})
}

// ErrCancelled is why a call the client cancelled ends.
var ErrCancelled = errors.New("the client cancelled the request")

// cancelledID returns the request a notifications/cancelled's params
// name, when it is a plain id.
func cancelledID(params json.RawMessage) (jsonrpc.ID, bool) {
	if len(params) == 0 || params[0] != '{' {
		return jsonrpc.ID{}, false
	}
	for key, val := range projection.Members(params) {
		if projection.KeyIs(key, "requestId") {
			id, ok := plainID(val)
			return id, ok && id.IsValid()
		}
	}
	return jsonrpc.ID{}, false
}

// end cancels the taken calls with cause (the first end's) and drops
// their replies.
func (c *takingConn) end(cause error) {
	c.mu.Lock()
	if !c.ended {
		c.ended, c.cause = true, cause
	}
	cause = c.cause
	running := make([]context.CancelCauseFunc, 0, len(c.calls))
	for _, cancel := range c.calls {
		running = append(running, cancel)
	}
	c.mu.Unlock()
	c.stop(cause)
	for _, cancel := range running {
		cancel(cause)
	}
}

// Close cancels the taken calls and closes the connection. It does not
// wait for them: see TakingTransport.Wait.
func (c *takingConn) Close() error {
	c.end(errClosed)
	return c.Connection.Close()
}

// TakesCalls reports whether the SDK's server adds nothing of its own to
// a tools/call result of session (assumption 26): the session was opened
// with initialize at a protocol before 2026-07-28, so the SDK neither
// stamps resultType and _meta on the result nor runs multi round-trip.
// The version read is the one the session was answered once its
// initialize passed through [NegotiateInitialize] (assumption 41).
func TakesCalls(session *mcp.ServerSession) bool {
	p := session.InitializeParams()
	return p != nil && p.ProtocolVersion < "2026-07-28"
}
