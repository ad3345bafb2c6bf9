package gateway

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
)

// sdkKeepAlive keeps the SDK's idle timer of an HTTP session from
// closing a session whose calls the fast path answers. The SDK resets the
// timer only when its handler serves a POST of the session (sdkwire's
// TestContractKeepAlive), so when it has seen none for a while, or while
// a long call runs, the gateway hands it a POST that changes nothing: a
// notifications/cancelled naming no request. The zero value is not ready:
// see newKeepAlive.
type sdkKeepAlive struct {
	every time.Duration // how stale the SDK's last POST may grow
	poke  func(ss *mcp.ServerSession)

	mu        sync.Mutex
	last      map[string]time.Time // the SDK's last POST by session id; guarded by mu
	pruneFrom int                  // prune last when it grows to this; guarded by mu
}

func newKeepAlive(every time.Duration, poke func(ss *mcp.ServerSession)) *sdkKeepAlive {
	return &sdkKeepAlive{every: every, poke: poke, last: make(map[string]time.Time), pruneFrom: 64}
}

// seen records that the SDK serves a POST of session id now.
func (k *sdkKeepAlive) seen(id string) {
	now := time.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	k.last[id] = now
	if len(k.last) < k.pruneFrom {
		return
	}
	// Sessions idle past the SDK's own timeout are gone: forget them.
	for s, t := range k.last {
		if now.Sub(t) > sessionTimeout {
			delete(k.last, s)
		}
	}
	k.pruneFrom = max(64, 2*len(k.last))
}

// forget drops session id's record: it has ended.
func (k *sdkKeepAlive) forget(id string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.last, id)
}

// stale reports whether the SDK last served a POST of id longer ago than
// every (or never, as far as the gateway knows).
func (k *sdkKeepAlive) stale(id string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	t, ok := k.last[id]
	return !ok || time.Since(t) > k.every
}

// during runs call, a fast-path call of ss, with ss kept alive: the SDK
// is poked first if its view of the session is stale, and again every
// every while the call runs.
func (k *sdkKeepAlive) during(ss *mcp.ServerSession, call func()) {
	id := ss.ID()
	if k.stale(id) {
		k.keep(ss)
	}
	var mu sync.Mutex
	ended := false
	var timer *time.Timer
	var tick func()
	tick = func() {
		k.keep(ss)
		mu.Lock()
		defer mu.Unlock()
		if !ended {
			timer = time.AfterFunc(k.every, tick)
		}
	}
	mu.Lock()
	timer = time.AfterFunc(k.every, tick)
	mu.Unlock()
	defer func() {
		mu.Lock()
		ended = true
		timer.Stop()
		mu.Unlock()
	}()
	call()
}

// keep pokes the SDK for ss, and records it.
func (k *sdkKeepAlive) keep(ss *mcp.ServerSession) {
	k.seen(ss.ID())
	k.poke(ss)
}

// pokeSDK hands the SDK's handler a POST of ss that changes nothing
// (sdkwire.KeepAliveBody), which resets its idle timer.
func (g *Gateway) pokeSDK(ss *mcp.ServerSession) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "/mcp", strings.NewReader(sdkwire.KeepAliveBody))
	if err != nil {
		return // unreachable: a fixed, valid request
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", ss.ID())
	if p := ss.InitializeParams(); p != nil {
		req.Header.Set("Mcp-Protocol-Version", p.ProtocolVersion)
	}
	g.http.ServeHTTP(discard{header: http.Header{}}, req)
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{ header http.Header }

func (d discard) Header() http.Header         { return d.header }
func (d discard) Write(p []byte) (int, error) { return len(p), nil }
func (d discard) WriteHeader(int)             {}
