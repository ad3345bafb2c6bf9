package gateway

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pending counts operations that have not ended yet, so a closer can wait
// until none is left. The zero value is ready to use.
type pending struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed when n drops to 0; nil unless someone waits
}

func (p *pending) add() {
	p.mu.Lock()
	p.n++
	p.mu.Unlock()
}

func (p *pending) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n--
	if p.n == 0 && p.zero != nil {
		close(p.zero)
		p.zero = nil
	}
}

// wait waits until no operation is left or deadline passes, and returns
// how many are left.
func (p *pending) wait(deadline time.Time) int {
	p.mu.Lock()
	if p.n == 0 {
		p.mu.Unlock()
		return 0
	}
	if p.zero == nil {
		p.zero = make(chan struct{})
	}
	zero := p.zero
	p.mu.Unlock()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-zero:
		return 0
	case <-timer.C:
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.n
	}
}

// trackedTransport wraps the transport of a stdio-like session so the
// gateway knows which tools/call requests still await their reply on the
// wire: the SDK's session Close refuses to write replies, so a graceful
// shutdown waits for them first.
type trackedTransport struct {
	mcp.Transport
	gateway *pending // the gateway-wide count, bumped too
	conn    *trackedConn
}

// Connect connects the wrapped transport and tracks its connection.
func (t *trackedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.conn = &trackedConn{Connection: c, gateway: t.gateway, ids: make(map[jsonrpc.ID]struct{})}
	return t.conn, nil
}

// SupportsProtocolVersion keeps the wrapped transport's answer visible to
// the SDK; a transport without one supports every version.
func (t *trackedTransport) SupportsProtocolVersion(version string) bool {
	if s, ok := t.Transport.(mcp.ProtocolVersionSupporter); ok {
		return s.SupportsProtocolVersion(version)
	}
	return true
}

// trackedConn counts the tools/call requests read and not yet answered.
type trackedConn struct {
	mcp.Connection
	gateway *pending
	pending pending

	mu  sync.Mutex
	ids map[jsonrpc.ID]struct{} // unanswered calls; nil after Close
}

// Read reads the next message and starts tracking a tools/call request.
func (c *trackedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Method == "tools/call" {
		c.mu.Lock()
		if _, dup := c.ids[req.ID]; !dup && c.ids != nil {
			c.ids[req.ID] = struct{}{}
			c.pending.add()
			c.gateway.add()
		}
		c.mu.Unlock()
	}
	return msg, err
}

// Write writes a message; a response, once written (or failed), ends the
// tracking of its request.
func (c *trackedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		_, tracked := c.ids[resp.ID]
		delete(c.ids, resp.ID)
		c.mu.Unlock()
		if tracked {
			c.pending.done()
			c.gateway.done()
		}
	}
	return err
}

// Close closes the connection; its unanswered calls will never be
// answered, so they stop counting.
func (c *trackedConn) Close() error {
	err := c.Connection.Close()
	c.mu.Lock()
	left := len(c.ids)
	c.ids = nil
	c.mu.Unlock()
	for range left {
		c.pending.done()
		c.gateway.done()
	}
	return err
}
