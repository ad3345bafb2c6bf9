package gateway

import (
	"cmp"
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
// stands in for the gateway's own transport, for measurement only:
// docs/engine.md lists what it does not do.

// engineDefault is the engine every gateway serves Streamable HTTP with:
// "own", the gateway's own transport (httpTransport, transport.go); the
// benchmarks turn on the spike's "sdk" (sdkEngine) to compare.
var engineDefault = "own"

// spikeEngine returns the engine engineDefault names.
func spikeEngine(g *Gateway) http.Handler {
	if engineDefault == "sdk" {
		return newSDKEngine(g)
	}
	return newTransport(g, cmp.Or(g.opts.idleTimeout, sessionTimeout))
}

// spikeSessions is a spike engine's table of sessions by id.
type spikeSessions struct {
	mu sync.Mutex
	m  map[string]spikeSession // guarded by mu
}

// spikeSession is one client session: the SDK's session, and what serves
// its requests after the first.
type spikeSession struct {
	session *mcp.ServerSession
	serve   http.HandlerFunc
}

// add keeps s under id until its session ends.
func (t *spikeSessions) add(id string, s spikeSession) {
	t.mu.Lock()
	if t.m == nil {
		t.m = make(map[string]spikeSession)
	}
	t.m[id] = s
	t.mu.Unlock()
	go func() {
		s.session.Wait()
		t.mu.Lock()
		delete(t.m, id)
		t.mu.Unlock()
	}()
}

// route serves r on the session it names (404 for none; DELETE ends it);
// a POST naming none goes to open.
func (t *spikeSessions) route(w http.ResponseWriter, r *http.Request, open http.HandlerFunc) {
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" && r.Method == http.MethodPost {
		open(w, r)
		return
	}
	t.mu.Lock()
	s, ok := t.m[id]
	t.mu.Unlock()
	switch {
	case !ok:
		http.Error(w, "session not found", http.StatusNotFound)
	case r.Method == http.MethodDelete:
		s.session.Close()
		w.WriteHeader(http.StatusNoContent)
	default:
		s.serve(w, r)
	}
}

// sdkEngine serves the stateful Streamable HTTP sessions of a gateway
// through the SDK's transport (design C).
type sdkEngine struct {
	g        *Gateway
	sessions spikeSessions
}

func newSDKEngine(g *Gateway) *sdkEngine { return &sdkEngine{g: g} }

func (e *sdkEngine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.sessions.route(w, r, e.open)
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
	e.sessions.add(t.SessionID, spikeSession{session: ss, serve: t.ServeHTTP})
	t.ServeHTTP(w, r)
	if ss.InitializeParams() == nil {
		ss.Close()
	}
}
