package gateway

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
)

// DefaultMaxSessions is Options.MaxSessions's default.
const DefaultMaxSessions = 1000

// touch records that session was just active, for eviction, and reports
// whether the gateway had not seen it before.
func (g *Gateway) touch(session *mcp.ServerSession) (first bool) {
	if session == nil {
		return false
	}
	now := time.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	_, seen := g.lastActive[session]
	g.lastActive[session] = now
	if !seen && session.ID() != "" {
		g.byID[session.ID()] = session
	}
	return !seen
}

// evictIdle closes the least recently active sessions while more than
// MaxSessions are open, keeping keep (the session being initialized). The
// sessions close in the background: closing waits for their handlers.
func (g *Gateway) evictIdle(keep *mcp.ServerSession) {
	limit := cmp.Or(g.opts.MaxSessions, DefaultMaxSessions)
	open := map[*mcp.ServerSession]bool{}
	for ss := range g.server.Sessions() {
		// A session-less probe's session is not counted: each would
		// evict the session idle longest.
		if ss == keep || !sdkwire.OneRequestSession(ss, "") {
			open[ss] = true
		}
	}
	g.mu.Lock()
	// A session evicted earlier may still be closing: it is no longer
	// counted, or a burst of new sessions would evict recent ones for it.
	for ss := range g.evictedOpen {
		if open[ss] {
			delete(open, ss)
		} else {
			delete(g.evictedOpen, ss)
		}
	}
	for ss := range g.lastActive {
		if !open[ss] {
			delete(g.lastActive, ss) // ended: forget it
			delete(g.logLevels, ss)
			delete(g.byID, ss.ID())
		}
	}
	for ss := range g.closing {
		if !open[ss] {
			delete(g.closing, ss)
		}
	}
	var evict []*mcp.ServerSession
	for len(open)-len(evict) > limit {
		oldest := g.oldestIdleLocked(keep, evict)
		if oldest == nil {
			break
		}
		evict = append(evict, oldest)
		delete(g.lastActive, oldest)
		if g.evictedOpen == nil {
			g.evictedOpen = make(map[*mcp.ServerSession]bool)
		}
		g.evictedOpen[oldest] = true
	}
	g.mu.Unlock()
	for _, ss := range evict {
		g.log.Debug("client session evicted: too many sessions", "session", ss.ID(), "limit", limit)
		// Its calls and listen stream end first: a session's Close waits
		// for its handlers.
		g.cancelCalls(ss, errSessionClosed)
		g.evicting.Go(func() { ss.Close() })
	}
}

// serveDelete ends the session a client's DELETE names. Its calls in
// flight are cancelled first (their backends are told): the SDK's Close
// waits for its handlers, so a call left running would hold the DELETE's
// answer until it ended on its own.
func (g *Gateway) serveDelete(w http.ResponseWriter, r *http.Request) {
	ss := g.sessionByID(r.Header.Get("Mcp-Session-Id"))
	if ss != nil {
		g.cancelCalls(ss, errSessionClosed)
	}
	g.http.ServeHTTP(w, r)
	if ss != nil && g.sessionByID(ss.ID()) == nil {
		// Unknown to the fast path before the client hears of the end
		// (net/http sends the answer after this returns): its next POST
		// gets the SDK's 404, not a call refused on a closing session.
		g.mu.Lock()
		delete(g.byID, ss.ID())
		g.mu.Unlock()
	}
}

// sessionByID returns the open session called id, or nil.
func (g *Gateway) sessionByID(id string) *mcp.ServerSession {
	if id == "" {
		return nil
	}
	for ss := range g.server.Sessions() {
		if ss.ID() == id {
			return ss
		}
	}
	return nil
}

// forgetSession drops everything the gateway keeps of ss once it has
// ended, whichever way it ended (DELETE, eviction, the SDK's idle
// timeout, a closed transport): left for the next client's initialize to
// prune, a thousand ended sessions held their views, bindings and SDK
// state for as long as no client came.
func (g *Gateway) forgetSession(ss *mcp.ServerSession) {
	g.mu.Lock()
	delete(g.lastActive, ss)
	delete(g.closing, ss)
	delete(g.evictedOpen, ss)
	delete(g.logLevels, ss)
	delete(g.byID, ss.ID())
	g.mu.Unlock()
	g.views.mu.Lock()
	delete(g.views.byPeer, ss)
	g.views.mu.Unlock()
	g.owners.forget(ss.ID())
	g.keepAlive.forget(ss.ID())
	g.parked.forget(ss)
	if g.events != nil {
		// The SDK ends the session's streams as its connection closes; an
		// event the fast path stored after that is dropped here.
		g.events.SessionClosed(context.Background(), ss.ID())
	}
}

// evicted waits until deadline for the sessions evictIdle is closing.
func (g *Gateway) evicted(deadline time.Time) error {
	if !waitUntil(deadline, g.evicting.Wait) {
		return fmt.Errorf("gateway: evicted sessions still closing when the shutdown timeout (%v) passed", g.timeout)
	}
	return nil
}

// oldestIdleLocked returns the tracked session active longest ago, other
// than keep and those in skip. g.mu must be held.
func (g *Gateway) oldestIdleLocked(keep *mcp.ServerSession, skip []*mcp.ServerSession) *mcp.ServerSession {
	var oldest *mcp.ServerSession
	var at time.Time
	for ss, t := range g.lastActive {
		if ss == keep || slices.Contains(skip, ss) {
			continue
		}
		if oldest == nil || t.Before(at) {
			oldest, at = ss, t
		}
	}
	return oldest
}
