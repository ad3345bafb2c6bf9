package sdkwire

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// codeMethodNotFound is the JSON-RPC error a server without
// server/discover answers it with.
const codeMethodNotFound = -32601

// ProbeTransport bounds the server/discover probe of protocol 2026-07-28
// on a stream connection (stdio, in-memory): a server that never answers it
// (it ignores unknown methods instead of answering -32601) would hold the
// handshake until the startup timeout. When the probe is unanswered after
// Bound, the connection answers it itself with -32601, which makes the SDK
// fall back to initialize (protocol 2025-11-25; assumption 18); the
// server's late answer, if any, is dropped. OnSilent, if set, is called
// when that happens.
//
// During the handshake its connection reads the wrapped one on a goroutine
// of its own, so that Read can return the made-up answer while the wrapped
// Read is blocked; once the handshake is answered, Read reads the wrapped
// connection directly again.
//
// With Unread, the bound runs from when the server has read the probe: a
// server slow to start (a package manager fetching it) would otherwise
// be taken for one that ignores the probe, then serve the probe it read
// late and refuse the fallback initialize as a duplicate, failing the
// handshake. One that never reads is left to the caller's timeout.
type ProbeTransport struct {
	Transport mcp.Transport
	Bound     time.Duration
	OnSilent  func()
	// Unread, when set, returns how many bytes written to the server it
	// has not read yet (a stdio child's stdin).
	Unread func() int
}

// Connect connects the wrapped transport.
func (t *ProbeTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &probeConn{Connection: conn, bound: t.Bound, onSilent: t.OnSilent, unread: t.Unread, msgs: make(chan readResult), pumpDone: make(chan struct{}), closed: make(chan struct{})}, nil
}

type readResult struct {
	msg jsonrpc.Message
	err error
}

type probeConn struct {
	mcp.Connection
	bound    time.Duration
	onSilent func()
	unread   func() int      // nil: unknown
	msgs     chan readResult // made-up answers, and what the pump read
	pumpDone chan struct{}   // closed when the pump has stopped: read directly
	direct   bool            // Read saw pumpDone; only Read touches it
	closed   chan struct{}   // closed by Close: senders give up
	failed   error           // the wrapped Read's error, once read

	closeOnce sync.Once

	pumpOnce sync.Once
	mu       sync.Mutex
	probe    *jsonrpc.ID // the discover call awaiting its answer
	timer    *time.Timer
	deadline time.Time   // when the probe's bound runs out
	faked    *jsonrpc.ID // answered by this connection: drop the server's
}

func (c *probeConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Method == "server/discover" && c.bound > 0 {
		id := req.ID
		c.mu.Lock()
		c.probe = &id
		c.deadline = time.Now().Add(c.bound)
		c.timer = time.AfterFunc(c.step(), func() { c.expire(id) })
		c.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

// step is how often the probe is looked at: at the bound, or, when Unread
// says whether the server has read it, ten times in a bound.
func (c *probeConn) step() time.Duration {
	if c.unread == nil {
		return c.bound
	}
	return c.bound / 10
}

// expire answers the probe id with -32601 if the server has not, once the
// bound ran out; while the server has not read all it was sent, the bound
// starts over.
func (c *probeConn) expire(id jsonrpc.ID) {
	c.mu.Lock()
	if c.probe == nil || *c.probe != id {
		c.mu.Unlock()
		return
	}
	if c.unread != nil {
		select {
		case <-c.closed:
			c.mu.Unlock()
			return
		default:
		}
		now := time.Now()
		if c.unread() > 0 {
			c.deadline = now.Add(c.bound)
		}
		if now.Before(c.deadline) {
			c.timer = time.AfterFunc(c.step(), func() { c.expire(id) })
			c.mu.Unlock()
			return
		}
	}
	c.probe, c.faked = nil, &id
	c.mu.Unlock()
	if c.onSilent != nil {
		c.onSilent()
	}
	c.send(readResult{msg: &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: codeMethodNotFound, Message: "server/discover: no answer (mcpbridge)"}}})
}

func (c *probeConn) send(r readResult) {
	select {
	case c.msgs <- r:
	case <-c.closed:
		select { // a Read of the closed connection waits a moment for it
		case c.msgs <- r:
		case <-time.After(closedReadWait):
		}
	}
}

func (c *probeConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	c.mu.Lock()
	if c.timer != nil {
		c.timer.Stop()
	}
	c.mu.Unlock()
	return c.Connection.Close()
}

// pump hands Read what the wrapped connection reads until the handshake is
// answered: the first response delivered while no probe is pending (the
// probe's own answer, or initialize's after a made-up one; a server
// answers in order, so a late answer to the probe comes before it).
func (c *probeConn) pump() {
	defer close(c.pumpDone)
	for {
		msg, err := c.Connection.Read(context.Background())
		resp, isResp := msg.(*jsonrpc.Response)
		if isResp && err == nil && c.late(resp.ID) {
			continue
		}
		c.send(readResult{msg, err})
		if err != nil || (isResp && c.answered()) {
			return
		}
	}
}

// late notes a response and reports whether it is the late answer to a
// probe this connection answered already.
func (c *probeConn) late(id jsonrpc.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.probe != nil && *c.probe == id {
		c.probe = nil
		c.timer.Stop()
		return false
	}
	return c.faked != nil && *c.faked == id
}

// answered reports whether no probe is pending.
func (c *probeConn) answered() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.probe == nil
}

func (c *probeConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	c.pumpOnce.Do(func() { go c.pump() })
	if c.direct {
		return c.Connection.Read(ctx)
	}
	if c.failed != nil { // Read runs on one goroutine at a time
		return nil, c.failed
	}
	select {
	case r := <-c.msgs:
		c.failed = r.err
		return r.msg, r.err
	case <-c.pumpDone:
		if c.failed != nil {
			return nil, c.failed
		}
		c.direct = true
		return c.Connection.Read(ctx)
	case <-c.closed:
		// What the wrapped connection read before it closed (the end of a
		// child that exited, in its terms) says more than the close.
		select {
		case r := <-c.msgs:
			c.failed = r.err
			return r.msg, r.err
		case <-time.After(closedReadWait):
			return nil, mcp.ErrConnectionClosed
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// closedReadWait bounds how long a Read of a closed connection waits for
// what the wrapped connection read last, which Close makes it return.
const closedReadWait = 100 * time.Millisecond
