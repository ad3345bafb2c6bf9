package gateway

import (
	"crypto/rand"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
)

// A design spike of issue 32 item 3 (docs/engine.md): Streamable HTTP
// served through the SDK's public types, with the connection-level take
// serve --stdio uses. The gateway makes one mcp.StreamableServerTransport
// per session, wraps it in sdkwire.TakingTransport, connects it with
// Server.Connect and routes a session's requests to its ServeHTTP. It
// stands in for the SDK's StreamableHTTPHandler and the HTTP fast path
// (fasthttp.go, faststream.go, fastask.go, keepalive.go) when built with
// the tag mcpbridge_engine, for measurement only: docs/engine.md lists
// what it does not do.

// engineDefault turns a design of the spike on for every gateway
// (engine_tag.go): "sdk" (sdkEngine) or "own" (ownEngine, engine_own.go).
var engineDefault = ""

// spikeEngine returns the engine engineDefault names, nil for none.
func spikeEngine(g *Gateway) http.Handler {
	switch engineDefault {
	case "sdk":
		return newSDKEngine(g)
	case "own":
		return newOwnEngine(g)
	}
	return nil
}

// sdkEngine serves the stateful Streamable HTTP sessions of a gateway.
type sdkEngine struct {
	g *Gateway

	mu       sync.Mutex
	sessions map[string]*engineSession // by session id; guarded by mu
}

// engineSession is one client session: its transport and the SDK's
// session on it.
type engineSession struct {
	transport *mcp.StreamableServerTransport
	session   *mcp.ServerSession
}

func newSDKEngine(g *Gateway) *sdkEngine {
	return &sdkEngine{g: g, sessions: make(map[string]*engineSession)}
}

// ServeHTTP routes a request to its session's transport; a POST without a
// session id opens a session.
func (e *sdkEngine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		if r.Method != http.MethodPost {
			http.Error(w, "Bad Request: Mcp-Session-Id header required", http.StatusBadRequest)
			return
		}
		e.open(w, r)
		return
	}
	e.mu.Lock()
	s := e.sessions[id]
	e.mu.Unlock()
	switch {
	case s == nil:
		http.Error(w, "session not found", http.StatusNotFound)
	case r.Method == http.MethodDelete:
		s.session.Close()
		w.WriteHeader(http.StatusNoContent)
	default:
		s.transport.ServeHTTP(w, r)
	}
}

// open connects a new session through the take and serves its first POST.
func (e *sdkEngine) open(w http.ResponseWriter, r *http.Request) {
	t := &mcp.StreamableServerTransport{SessionID: rand.Text(), EventStore: e.g.events}
	var current atomic.Pointer[mcp.ServerSession]
	taking := &sdkwire.TakingTransport{Transport: t, Take: e.g.take(&current)}
	ss, err := e.g.server.Connect(r.Context(), taking, nil)
	if err != nil {
		e.g.log.Error("HTTP session not connected", "err", err)
		http.Error(w, "failed connection", http.StatusInternalServerError)
		return
	}
	current.Store(ss)
	e.mu.Lock()
	e.sessions[t.SessionID] = &engineSession{transport: t, session: ss}
	e.mu.Unlock()
	go func() {
		ss.Wait()
		e.mu.Lock()
		delete(e.sessions, t.SessionID)
		e.mu.Unlock()
	}()
	t.ServeHTTP(w, r)
	if ss.InitializeParams() == nil {
		ss.Close()
	}
}
