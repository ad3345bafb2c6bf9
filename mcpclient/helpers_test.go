package mcpclient

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/tool"
)

// The messages of the log records that tests look for (their facts are
// attributes: see the package doc).
const (
	msgGiveUp          = "giving up after consecutive failed reconnect attempts — tools unregistered; reload the config or restart mcpbridge to reconnect"
	msgLostNoReconnect = "connection lost and reconnect is disabled — registered tools will fail until a reload or restart"
	msgReconnected     = "reconnected and re-synced tools"
	msgReconnecting    = "connection lost; reconnecting"
	msgResync          = "list changed, re-syncing"
)

// harness is one Server under test with its registry and log.
type harness struct {
	t   *testing.T
	srv *Server
	reg *tool.Registry
	log *mcptest.Log
}

// start starts a server and waits for its first attempt.
func start(t *testing.T, cfg Config, opts Options) (*harness, error) {
	t.Helper()
	h := &harness{t: t, reg: opts.Registry, log: mcptest.NewLog()}
	if h.reg == nil {
		h.reg = tool.NewRegistry()
	}
	opts.Registry = h.reg
	opts.Logger = h.log.Logger()
	if opts.CloseGrace == 0 && opts.ladderAfter == nil { // a test on its own clock keeps the graces
		opts.CloseGrace, opts.TermGrace = 200*time.Millisecond, 200*time.Millisecond
	}
	srv, err := Start(cfg, opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	h.srv = srv
	t.Cleanup(func() { srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return h, srv.WaitReady(ctx)
}

// mustStart is start that fails the test when the first attempt fails.
func mustStart(t *testing.T, cfg Config, opts Options) *harness {
	t.Helper()
	h, err := start(t, cfg, opts)
	if err != nil {
		t.Fatalf("first attempt failed: %v\nlog:\n%s", err, h.log.Text())
	}
	return h
}

// names lists the registry's tool names.
func (h *harness) names() []string {
	var out []string
	for _, tl := range h.reg.List() {
		out = append(out, tl.Name)
	}
	return out
}

// call executes a tool with a generous deadline.
func (h *harness) call(name, args string) tool.Result {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var raw json.RawMessage
	if args != "" {
		raw = json.RawMessage(args)
	}
	res, err := h.reg.Execute(ctx, name, raw)
	if err != nil {
		h.t.Fatalf("Execute(%s): %v", name, err)
	}
	return res
}

// waitFor polls cond until it holds or 20 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	mcptest.Eventually(t, 20*time.Second, cond, "%s", what)
}

// inMemory returns a NewTransport that connects every attempt to srv over
// an in-memory pipe.
func inMemory(t *testing.T, srv *mcp.Server) func() (mcp.Transport, error) {
	return newMemServer(t, srv).transport
}

// memServer connects attempts to an in-process server and keeps their
// server sides, so a test can crash one as a dying server would.
//
// The server sides are closed by a cleanup registered at creation, so it
// runs after the client's (registered later, by start): a server session's
// Close waits for its handlers, a listen stream's among them, which end
// only when the client goes.
type memServer struct {
	srv      *mcp.Server
	mu       sync.Mutex
	sessions []*mcp.ServerSession
	conns    []mcp.Connection // the server sides' connections, by attempt
}

// keptConn is a transport that keeps the connection it made.
type keptConn struct {
	mcp.Transport
	conn mcp.Connection
}

func (k *keptConn) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := k.Transport.Connect(ctx)
	k.conn = c
	return c, err
}

func newMemServer(t *testing.T, srv *mcp.Server) *memServer {
	m := &memServer{srv: srv}
	t.Cleanup(func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, ss := range m.sessions {
			ss.Close()
		}
	})
	return m
}

// transport is a NewTransport.
func (m *memServer) transport() (mcp.Transport, error) {
	ct, st := mcp.NewInMemoryTransports()
	kept := &keptConn{Transport: st}
	ss, err := m.srv.Connect(context.Background(), kept, nil)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.sessions = append(m.sessions, ss)
	m.conns = append(m.conns, kept.conn)
	m.mu.Unlock()
	return ct, nil
}

// connections is how many attempts have connected.
func (m *memServer) connections() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sessions)
}

// crash closes the server side of the n-th connection (1-based) at
// once, as a dying server's end would. Not the session's Close: it waits
// for the session's handlers first, and the SDK's misses a listen stream
// that arrives as it starts, which then parks for ever.
func (m *memServer) crash(n int) {
	m.mu.Lock()
	conn := m.conns[n-1]
	m.mu.Unlock()
	conn.Close()
}

// rawPipe returns a NewTransport that connects every attempt to raw over
// pipes.
func rawPipe(t *testing.T, raw *mcppeer.RawServer) func() (mcp.Transport, error) {
	return func() (mcp.Transport, error) {
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			raw.Serve(context.Background(), sr, sw)
			sw.Close()
		}()
		t.Cleanup(func() {
			cw.Close()
			sr.Close()
			<-done
		})
		return &mcp.IOTransport{Reader: cr, Writer: cw}, nil
	}
}

// stdioConfig is a minimal valid stdio config; NewTransport tests override
// the transport itself.
func stdioConfig(serverName string) Config {
	return Config{ServerName: serverName, Transport: TransportStdio, Command: "unused"}
}

// wireRecorder records the tools/call requests a go-sdk server receives.
type wireRecorder struct {
	mu    sync.Mutex
	calls []*mcp.CallToolParamsRaw
	seen  chan string // tool name of each call, as it arrives
}

func newWireRecorder(srv *mcp.Server) *wireRecorder {
	w := &wireRecorder{seen: make(chan string, 100)}
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && method == "tools/call" {
				w.mu.Lock()
				w.calls = append(w.calls, p)
				w.mu.Unlock()
				w.seen <- p.Name
			}
			return next(ctx, method, req)
		}
	})
	return w
}

func (w *wireRecorder) last() *mcp.CallToolParamsRaw {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.calls) == 0 {
		return nil
	}
	return w.calls[len(w.calls)-1]
}

func newRegistry() *tool.Registry { return tool.NewRegistry() }
