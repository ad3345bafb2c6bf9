package gateway

import (
	"cmp"
	"fmt"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/serverwire"
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
	st := g.keepLocked(session)
	if st == nil {
		return false // closed
	}
	first = st.lastActive.IsZero() // a stdio-like session's is kept from its connection
	st.lastActive = now
	return first
}

// evictIdle closes sessions while more than MaxSessions are open, keeping
// keep (the session being initialized, opened by who): each time the one
// idle longest of the identity holding the most sessions, so that an
// identity opening sessions in a loop closes its own, never another's
// while it holds more. The sessions close in the background: closing
// waits for their handlers.
func (g *Gateway) evictIdle(keep *mcp.ServerSession, who string) {
	limit := cmp.Or(g.opts.MaxSessions, DefaultMaxSessions)
	open := map[*mcp.ServerSession]bool{}
	for ss := range g.server.Sessions() {
		// A session-less probe's session is not counted: each would
		// evict the session idle longest.
		if ss == keep || !serverwire.OneRequestSession(ss, "") {
			open[ss] = true
		}
	}
	holders := g.owners.identities()
	holderOf := func(ss *mcp.ServerSession) string {
		if ss == keep {
			return who
		}
		return holders[ss.ID()]
	}
	g.mu.Lock()
	// A session evicted earlier may still be closing: it is no longer
	// counted, or a burst of new sessions would evict recent ones for it.
	for ss, st := range g.sessions {
		if st.evicted {
			delete(open, ss)
		}
	}
	held := map[string]int{}
	for ss := range open {
		held[holderOf(ss)]++
	}
	var evict []*mcp.ServerSession
	for len(open)-len(evict) > limit {
		most := largest(held)
		oldest := g.oldestIdleLocked(keep, open, func(ss *mcp.ServerSession) bool { return holderOf(ss) == most })
		if oldest == nil {
			oldest = g.oldestIdleLocked(keep, open, func(*mcp.ServerSession) bool { return true })
		}
		if oldest == nil {
			break
		}
		oldest.evicted = true
		held[holderOf(oldest.ss)]--
		evict = append(evict, oldest.ss)
	}
	g.mu.Unlock()
	for _, ss := range evict {
		g.log.Debug("client session evicted: too many sessions", "session", ss.ID(), "limit", limit)
		// Its calls and listen stream end first: a session's Close waits
		// for its handlers.
		g.cancelCalls(ss, errSessionClosed)
		g.evicting.Go(func() {
			g.awaitPOSTs(ss) // the cancelled calls' answers, which Close would drop
			ss.Close()
		})
	}
}

// largest is the key of held with the greatest count (of equal ones,
// the least, so that the choice does not follow the map's order).
func largest(held map[string]int) string {
	most, n := "", -1
	for k, c := range held {
		if c > n || c == n && k < most {
			most, n = k, c
		}
	}
	return most
}

// serveDelete ends the session a client's DELETE names. Its calls in
// flight are cancelled first (their backends are told): the SDK's Close
// waits for its handlers, so a call left running would hold the DELETE's
// answer until it ended on its own.
func (g *Gateway) serveDelete(w http.ResponseWriter, r *http.Request) {
	ss := g.sessionByID(r.Header.Get("Mcp-Session-Id"))
	if ss != nil && !unsupportedVersion(r) { // a DELETE the transport refuses ends nothing
		g.cancelCalls(ss, errSessionClosed)
	}
	g.engine.ServeHTTP(w, r)
	if ss != nil && g.sessionByID(ss.ID()) == nil {
		// Unknown to the gateway before the client hears of the end
		// (net/http sends the answer after this returns): its next POST
		// gets the SDK's 404, not a call refused on a closing session.
		// The rest ends with the session (end).
		g.mu.Lock()
		if st := g.byID[ss.ID()]; st != nil && st.ss == ss {
			delete(g.byID, ss.ID())
		}
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

// evicted waits until deadline for the sessions evictIdle is closing.
func (g *Gateway) evicted(deadline time.Time) error {
	if !waitUntil(deadline, g.evicting.Wait) {
		return fmt.Errorf("gateway: evicted sessions still closing when the shutdown timeout (%v) passed", g.timeout)
	}
	return nil
}

// oldestIdleLocked returns the session active longest ago among those
// open that of takes, other than keep, those evicted already and those
// that sent no request yet. g.mu must be held.
func (g *Gateway) oldestIdleLocked(keep *mcp.ServerSession, open map[*mcp.ServerSession]bool, of func(*mcp.ServerSession) bool) *sessionState {
	var oldest *sessionState
	for ss, st := range g.sessions {
		if ss == keep || st.evicted || !open[ss] || st.lastActive.IsZero() || !of(ss) {
			continue
		}
		if oldest == nil || st.lastActive.Before(oldest.lastActive) {
			oldest = st
		}
	}
	return oldest
}
