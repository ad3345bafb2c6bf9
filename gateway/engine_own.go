package gateway

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
)

// The second design of the spike (docs/engine.md, design D): Streamable
// HTTP by an mcp.Transport of the gateway's own. The SDK's ServerSession
// is the one session engine (initialize, every method, its own requests);
// the connection's Read decodes each POST once (sdkwire.DecodeMessage) and
// the take serve --stdio uses answers tools/call beneath the session; the
// connection's Write routes every message to the POST of the request it
// answers or belongs to. The SDK's StreamableHTTPHandler and transport are
// not used at all. A prototype for measurement: stateful sessions, one
// message per POST, no GET stream (405, which clients accept), no event
// store, no header checks; docs/engine.md lists the rest.

// ownEngine serves the stateful Streamable HTTP sessions of a gateway.
type ownEngine struct {
	g        *Gateway
	sessions spikeSessions
	// requests maps the RequestExtra of each request in flight to its id,
	// for tag (the SDK's own request id is out of reach).
	requests sync.Map // *mcp.RequestExtra → jsonrpc.ID
}

func newOwnEngine(g *Gateway) *ownEngine {
	e := &ownEngine{g: g}
	g.server.AddReceivingMiddleware(e.tag)
	return e
}

// tag gives a request the SDK serves its id in the context, so that what
// its handler sends reaches its POST (ownConn.Write), as a taken call's.
func (e *ownEngine) tag(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if id, ok := e.requests.Load(req.GetExtra()); ok {
			ctx = sdkwire.WithRequest(ctx, id.(jsonrpc.ID))
		}
		return next(ctx, method, req)
	}
}

// ServeHTTP routes a request to its session; a POST without a session id
// opens one.
func (e *ownEngine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		w.Header().Set("Allow", "POST, DELETE")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	e.sessions.route(w, r, e.open)
}

// open connects a session on a new connection, through the take, and
// serves its first POST.
func (e *ownEngine) open(w http.ResponseWriter, r *http.Request) {
	c := &ownConn{id: rand.Text(), requests: &e.requests, incoming: make(chan jsonrpc.Message, 1), done: make(chan struct{}),
		posts: make(map[jsonrpc.ID]*ownPost)}
	var current atomic.Pointer[mcp.ServerSession]
	taking := &sdkwire.TakingTransport{Transport: ownTransport{c}, Take: e.g.take(&current), Routes: true}
	ss, err := e.g.server.Connect(context.WithoutCancel(r.Context()), taking, nil)
	if err != nil {
		http.Error(w, "failed connection", http.StatusInternalServerError)
		return
	}
	current.Store(ss)
	e.sessions.add(c.id, spikeSession{session: ss, serve: func(w http.ResponseWriter, r *http.Request) { c.servePOST(w, r, false) }})
	c.servePOST(w, r, true)
	if ss.InitializeParams() == nil {
		ss.Close()
	}
}

// ownTransport hands Server.Connect its connection.
type ownTransport struct{ c *ownConn }

func (t ownTransport) Connect(context.Context) (mcp.Connection, error) { return t.c, nil }

// SupportsProtocolVersion refuses 2026-07-28 and later on a stateful
// session, as the SDK's transport does (SEP-2575 is per request).
func (ownTransport) SupportsProtocolVersion(version string) bool { return version < "2026-07-28" }

// ownConn is a session's connection: messages from its POSTs in, and out
// to the POST each belongs to.
type ownConn struct {
	id       string
	requests *sync.Map // the engine's requests in flight, for its tag
	incoming chan jsonrpc.Message
	done     chan struct{}
	once     sync.Once

	mu    sync.Mutex
	posts map[jsonrpc.ID]*ownPost // the POST of each request in flight; guarded by mu
}

// ownPost is a POST waiting for what its request brings: related
// messages, then the response (final).
type ownPost struct{ out chan ownOut }

type ownOut struct {
	data  []byte
	final bool
}

var errOwnClosed = errors.New("session closed")

func (c *ownConn) SessionID() string { return c.id }

func (c *ownConn) Close() error {
	c.once.Do(func() { close(c.done) })
	return nil
}

func (c *ownConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-c.incoming:
		return msg, nil
	case <-c.done:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write sends msg on the POST of the request it answers or, for a taken
// call's notifications and requests, belongs to; anything else would go
// on the session's GET stream, which the prototype has not.
func (c *ownConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	resp, final := msg.(*jsonrpc.Response)
	var id jsonrpc.ID
	if final {
		id = resp.ID
	} else if id, _ = sdkwire.TakenRequest(ctx); !id.IsValid() {
		return nil
	}
	c.mu.Lock()
	p := c.posts[id]
	if final {
		delete(c.posts, id)
	}
	c.mu.Unlock()
	if p == nil {
		return nil
	}
	select {
	case p.out <- ownOut{data, final}:
		return nil
	case <-c.done:
		return errOwnClosed
	}
}

// servePOST hands the POST's message to the session and writes what it
// brings back: the response alone as one JSON body, else an SSE stream.
func (c *ownConn) servePOST(w http.ResponseWriter, r *http.Request, initialize bool) {
	body := bodyOf(r)
	if body == nil {
		var err error
		if body, err = io.ReadAll(r.Body); err != nil {
			http.Error(w, "failed to read body", http.StatusBadRequest)
			return
		}
	}
	msg, err := sdkwire.DecodeMessage(body)
	if err != nil {
		http.Error(w, "malformed payload: "+err.Error(), http.StatusBadRequest)
		return
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		if !c.deliver(msg) {
			http.Error(w, "session is closing", http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	p := &ownPost{out: make(chan ownOut, 4)}
	c.mu.Lock()
	_, dup := c.posts[req.ID]
	if !dup {
		c.posts[req.ID] = p
	}
	c.mu.Unlock()
	if dup {
		http.Error(w, "duplicate in-flight request ID", http.StatusBadRequest)
		return
	}
	extra := &mcp.RequestExtra{Header: r.Header}
	req.Extra = extra
	c.requests.Store(extra, req.ID)
	defer c.requests.Delete(extra)
	if !c.deliver(req) {
		http.Error(w, "session is closing", http.StatusNotFound)
		return
	}
	if initialize && req.Method == "initialize" {
		w.Header().Set("Mcp-Session-Id", c.id)
	}
	c.answer(w, r, p)
}

// deliver hands msg to the session, reporting false once it has ended.
func (c *ownConn) deliver(msg jsonrpc.Message) bool {
	select {
	case c.incoming <- msg:
		return true
	case <-c.done:
		return false
	}
}

// answer writes what p receives until its response.
func (c *ownConn) answer(w http.ResponseWriter, r *http.Request, p *ownPost) {
	var out []byte
	for sse := false; ; sse = true {
		select {
		case m := <-p.out:
			if m.final && !sse {
				sdkwire.SetResponseHeaders(w.Header(), true)
				w.Write(m.data)
				return
			}
			if !sse {
				sdkwire.SetResponseHeaders(w.Header(), false)
			}
			out = sdkwire.AppendEvent(out[:0], "message", "", m.data)
			w.Write(out)
			if m.final {
				return
			}
			http.NewResponseController(w).Flush()
		case <-r.Context().Done():
			return
		case <-c.done:
			return
		}
	}
}
