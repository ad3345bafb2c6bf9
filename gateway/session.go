package gateway

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// sessionState is everything the gateway keeps of one client session it
// serves with state (a stdio-like session, a stateful HTTP session; not
// the one-request sessions of stateless serving and probes): made as a
// stdio-like session connects (serveTransport) or on an HTTP session's
// first request (touch), held in Gateway.sessions, and let go
// in one place, end, however the session ended (a DELETE, eviction past
// MaxSessions, the SDK's idle timeout, a closed transport, Close). What
// is keyed by the session elsewhere (its owner, the SDK keep-alive, its
// parked calls, its stored events, its subscriptions' screens, the
// streams it may resume) is let go there too.
type sessionState struct {
	ss *mcp.ServerSession
	id string // ss.ID(), "" off HTTP
	// ended is closed once the session ended and end let go of it.
	ended chan struct{}
	// gone is closed once end has also ended its tasks; tasksErr (set
	// before) says whether they ended within the shutdown timeout.
	gone     chan struct{}
	tasksErr error

	// The rest is guarded by Gateway.mu.

	lastActive time.Time // its last request, for evicting the one idle longest
	closing    bool      // its calls are being cancelled: no new ones
	evicted    bool      // evictIdle closed it; it may not have ended yet
	calls      int       // tools/call requests in flight (MaxCallsPerSession)
	asks       int       // backends' requests waiting for its answer (MaxAsksPerSession)
	view       *sessionView
	tasks      taskBook // its tasks, whatever its transport (takeTasks)
}

// taskBook is the tasks of one client session: in the shapes of
// 2025-11-25 (taskBody) on a session opened with initialize, of the
// 2026-07-28 extension (extBody) on one without. Each store is made on
// first use; end ends them with the session.
type taskBook struct {
	legacy, ext *sessionTasks
}

// close cancels the book's tasks, telling their calls why (cause), and
// waits for them until deadline.
func (b taskBook) close(deadline time.Time, cause error) error {
	var errs []error
	for _, st := range []*sessionTasks{b.legacy, b.ext} {
		if st != nil {
			errs = append(errs, st.close(deadline, cause))
		}
	}
	return errors.Join(errs...)
}

// held reports whether the book has a store.
func (b taskBook) held() bool { return b.legacy != nil || b.ext != nil }

// tasksOf returns the tasks of session ss in the shapes of the extension
// when ext, else of 2025-11-25, made on first use; nil for a session the
// gateway keeps no state of (one that ended), or once the gateway is
// closed.
func (g *Gateway) tasksOf(ss *mcp.ServerSession, ext bool) *sessionTasks {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.stateLocked(ss)
	if st == nil || g.closed {
		return nil
	}
	shelf := &st.tasks.legacy
	if ext {
		shelf = &st.tasks.ext
	}
	if *shelf == nil {
		*shelf = newSessionTasks(ext)
	}
	return *shelf
}

// stateLocked returns ss's state, nil when the gateway serves ss without
// state or ss ended. g.mu must be held.
func (g *Gateway) stateLocked(ss *mcp.ServerSession) *sessionState {
	if ss == nil {
		return nil
	}
	return g.sessions[ss]
}

// stateOf is stateLocked taking g.mu.
func (g *Gateway) stateOf(ss *mcp.ServerSession) *sessionState {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.stateLocked(ss)
}

// keepLocked returns ss's state, made when the gateway had none; nil
// once the gateway is closed. g.mu must be held.
func (g *Gateway) keepLocked(ss *mcp.ServerSession) *sessionState {
	if st := g.sessions[ss]; st != nil {
		return st
	}
	return g.openLocked(ss)
}

// openLocked makes ss's state and starts the watcher that ends it, owned
// by g.watching (Close waits for it). nil once the gateway is closed:
// Close closes every session, and no watcher may start after it waited.
// g.mu must be held.
func (g *Gateway) openLocked(ss *mcp.ServerSession) *sessionState {
	if g.closed {
		return nil
	}
	st := &sessionState{ss: ss, id: ss.ID(), ended: make(chan struct{}), gone: make(chan struct{})}
	g.sessions[ss] = st
	if st.id != "" {
		g.byID[st.id] = st
	}
	g.watching.Go(func() {
		_ = ss.Wait()
		g.end(st)
	})
	return st
}

// end lets go of everything the gateway keeps of a session that ended,
// whichever way it ended: left for the next client to prune, a thousand
// ended sessions held their views, bindings and SDK state for as long as
// no client came. Its tasks are cancelled and waited for (within the
// shutdown timeout; at Close, Close does that); its parked calls are
// cancelled.
func (g *Gateway) end(st *sessionState) {
	g.mu.Lock()
	if g.sessions[st.ss] == st {
		delete(g.sessions, st.ss)
	}
	if st.id != "" && g.byID[st.id] == st {
		delete(g.byID, st.id)
	}
	delete(g.subscribers, st.ss)
	tasks := st.tasks
	if g.closed {
		tasks = taskBook{} // Close took them as it closed the gateway (heldTasksLocked)
	}
	g.mu.Unlock()
	if st.id != "" {
		g.owners.forget(st.id)
		g.vanish.forgetSession(st.id)
	}
	g.parked.forget(st.ss)
	if g.events != nil && st.id != "" {
		// The SDK ends the session's streams as its connection closes; an
		// event the transport stored after that is dropped here.
		g.events.SessionClosed(context.Background(), st.id)
	}
	close(st.ended)
	if err := tasks.close(time.Now().Add(g.timeout), errSessionClosed); err != nil {
		st.tasksErr = err
		g.log.Warn("closing a session's tasks", "session", st.id, "err", err)
	}
	close(st.gone)
}

// watchersDone waits until deadline for the sessions' watchers (each
// returns once its session ended and end let go of it).
func (g *Gateway) watchersDone(deadline time.Time) error {
	if !waitUntil(deadline, g.watching.Wait) {
		return fmt.Errorf("gateway: client sessions still ending when the shutdown timeout (%v) passed", g.timeout)
	}
	return nil
}

// heldTasks is the tasks of session id, as Close takes them.
type heldTasks struct {
	id   string
	book taskBook
}

// heldTasksLocked returns the tasks of every session, for Close to take
// as it closes the gateway: a session that ends from then on leaves its
// tasks to Close (end), and one that ended before closed them itself, so
// taken in the same hold of g.mu, none is missed whatever the order of a
// session's end and Close. g.mu must be held.
func (g *Gateway) heldTasksLocked() []heldTasks {
	var all []heldTasks
	for _, st := range g.sessions {
		if st.tasks.held() {
			all = append(all, heldTasks{st.id, st.tasks})
		}
	}
	return all
}

// closeTasks cancels, at Close, the tasks of all (heldTasksLocked),
// whether or not their sessions close in time, and waits for them until
// deadline.
func (g *Gateway) closeTasks(all []heldTasks, deadline time.Time) {
	var wg sync.WaitGroup
	for _, h := range all {
		wg.Go(func() {
			if err := h.book.close(deadline, errClosing); err != nil {
				g.log.Warn("closing a session's tasks", "session", h.id, "err", err)
			}
		})
	}
	wg.Wait()
}

// takeAsk takes one of session's MaxAsksPerSession slots, or reports
// there is none left. A session without state (a one-request session)
// counts in g.asks.
func (g *Gateway) takeAsk(session *mcp.ServerSession) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if st := g.stateLocked(session); st != nil {
		if st.asks >= MaxAsksPerSession {
			return false
		}
		st.asks++
		return true
	}
	if g.asks[session] >= MaxAsksPerSession {
		return false
	}
	g.asks[session]++
	return true
}

// releaseAsk gives back a slot takeAsk took.
func (g *Gateway) releaseAsk(session *mcp.ServerSession) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if st := g.stateLocked(session); st != nil {
		st.asks--
		return
	}
	if g.asks[session]--; g.asks[session] <= 0 {
		delete(g.asks, session)
	}
}

// clientSession is the tool.Session of a client's calls: a source that
// keeps state per session (mcpclient's share: session) keys it by this
// value and lets it go when Done closes.
type clientSession struct {
	g       *Gateway
	session *mcp.ServerSession
}

var _ tool.Session = clientSession{}

// Done returns a channel closed when the session ends.
func (c clientSession) Done() <-chan struct{} { return c.g.ends.of(c.session) }

// sessionEnds gives the channel closed when a session ends: its state's,
// or for a session served without state (a one-request session) one of
// its own, watched by a goroutine that g.watching owns as well.
type sessionEnds struct {
	g      *Gateway
	mu     sync.Mutex
	byID   map[*mcp.ServerSession]chan struct{} // sessions without state; guarded by mu
	closed bool                                 // Close waits for the watchers: no new one; guarded by mu
}

// of returns session's channel.
func (e *sessionEnds) of(session *mcp.ServerSession) <-chan struct{} {
	if st := e.g.stateOf(session); st != nil {
		return st.ended
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if ch, ok := e.byID[session]; ok {
		return ch
	}
	ch := make(chan struct{})
	if e.closed {
		close(ch) // the gateway closed every session
		return ch
	}
	if e.byID == nil {
		e.byID = make(map[*mcp.ServerSession]chan struct{})
	}
	e.byID[session] = ch
	e.g.watching.Go(func() {
		_ = session.Wait()
		e.mu.Lock()
		delete(e.byID, session)
		e.mu.Unlock()
		close(ch)
	})
	return ch
}

// close starts no watcher after it: Close is about to wait for them.
func (e *sessionEnds) close() {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
}
