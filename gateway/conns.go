package gateway

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// connGate is the listener ServeListener serves on: it bounds the
// connections served at once, in total and per owner (a client address, or
// the identity its requests authenticated as: claim), without ever
// blocking accept. A connection that has sent no request yet, or sits idle
// between requests, holds a slot and nothing else, so when a new connection
// finds no slot the oldest such one is shed: a flood of silent or
// header-dribbling sockets cannot keep an authorized client out. Only when
// every slot serves a request is the new connection refused, with a 503.
//
// A connection serves a request from when its handler starts (serving) to
// when it is idle again (track, the http.Server's ConnState hook): one
// still sending its headers, or being answered 431 and closed, holds no
// request and may be shed. Safe for concurrent use.
type connGate struct {
	net.Listener
	max, perAddr, perIdentity int
	log                       *slog.Logger
	times                     edgeTimes
	stopClock                 func() // ends the clock (Close); nil until it runs

	// inRequest counts the connections serving a request (from their
	// handler's start until idle, hijacked or closed), for a shutdown to
	// wait for.
	inRequest pending

	mu       sync.Mutex
	conns    map[*gateConn]struct{} // guarded by mu
	byOwner  map[string]int         // guarded by mu
	refused  int                    // since the last warning; guarded by mu
	warnedAt time.Time              // guarded by mu
}

// gateConn is a connection the gate admitted.
type gateConn struct {
	net.Conn
	gate *connGate
	// owner is whom the connection counts against: its client's IP until
	// a request on it is authenticated, then that identity (ownerOf).
	owner string
	once  sync.Once

	// guarded by gate.mu
	busy    bool      // serving a request (or hijacked)
	counted bool      // counted in gate.inRequest
	served  bool      // has served a request
	since   time.Time // when it was accepted or last became idle

	// For the gate's clock (edgeclock.go), which reads them without mu.
	headersFrom atomic.Int64                 // unix ns the headers began to arrive; 0 when none are awaited
	awaiting    atomic.Bool                  // idle: the next request's first byte starts its headers
	body        atomic.Pointer[deadlineBody] // the body being read under a deadline, nil when none
}

func newConnGate(ln net.Listener, max, perAddr, perIdentity int, log *slog.Logger) *connGate {
	return &connGate{Listener: ln, max: max, perAddr: perAddr, perIdentity: perIdentity, log: log,
		conns: make(map[*gateConn]struct{}), byOwner: make(map[string]int)}
}

// forgetBody ends the clock's watch of the body of the request the
// connection served, if it was not read to its end: net/http has drained
// what it would of it (under the clock, which cuts a drain that stalls).
func (c *gateConn) forgetBody() {
	if b := c.body.Swap(nil); b != nil {
		b.forget()
	}
}

// Read notes when a keep-alive connection's next request begins, for the
// header time limit.
func (c *gateConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && c.awaiting.Load() {
		c.awaiting.Store(false)
		c.headersFrom.Store(time.Now().UnixNano())
	}
	return n, err
}

// ownerOf is the owner key of an authenticated identity; an IP never
// starts so.
func ownerOf(identity string) string { return "identity:" + identity }

// Accept returns the next connection the gate admits; a connection it
// refuses is answered and closed here.
func (g *connGate) Accept() (net.Conn, error) {
	for {
		c, err := g.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if gc := g.admit(c); gc != nil {
			return gc, nil
		}
	}
}

// admit registers c, shedding an idle connection to make room if it must;
// nil means c was refused (and closed).
func (g *connGate) admit(c net.Conn) *gateConn {
	gc := &gateConn{Conn: c, gate: g, owner: hostOnly(c.RemoteAddr().String()), since: time.Now()}
	gc.headersFrom.Store(gc.since.UnixNano())
	g.mu.Lock()
	victim, ok := g.makeRoom(gc.owner)
	if ok {
		g.conns[gc] = struct{}{}
		g.countLocked(gc, +1)
	}
	var shed string // the victim's owner, read under g.mu: a claim may move it
	var idle time.Duration
	if victim != nil {
		shed, idle = victim.owner, time.Since(victim.since).Round(time.Millisecond)
	}
	g.mu.Unlock()
	if victim != nil {
		victim.Conn.Close()
		g.log.Debug("HTTP connection shed for a new one", "client", shed, "idle", idle)
	}
	if !ok {
		g.warnRefused(gc.owner)
		refuseConn(c)
		return nil
	}
	return gc
}

// warnRefused logs a refused connection, at most once a second with the
// count since the last line: a flood must not flood the log too.
func (g *connGate) warnRefused(addr string) {
	g.mu.Lock()
	g.refused++
	n, now := g.refused, time.Now()
	warn := now.Sub(g.warnedAt) >= time.Second
	if warn {
		g.refused, g.warnedAt = 0, now
	}
	g.mu.Unlock()
	if warn {
		g.log.Warn("HTTP connections refused: every connection slot is serving a request", "refused", n, "last_client", addr, "max_connections", g.max, "max_connections_per_address", g.perAddr)
	}
}

// makeRoom decides, under mu, whether a connection from addr (not yet
// authenticated: its owner is its address) may be served:
// at once, or by shedding the returned victim (already forgotten).
func (g *connGate) makeRoom(addr string) (victim *gateConn, ok bool) {
	switch {
	case g.byOwner[addr] >= g.perAddr:
		victim = g.oldestIdle(addr)
	case len(g.conns) >= g.max:
		victim = g.oldestIdle("")
	default:
		return nil, true
	}
	if victim == nil {
		return nil, false
	}
	g.forgetLocked(victim)
	return victim, true
}

// oldestIdle returns the connection to shed, of owner ("" for any): of
// those not serving a request, one that never sent a request before a
// keep-alive one that did (a client's), the one waiting longest first; nil
// when there is none.
func (g *connGate) oldestIdle(owner string) *gateConn {
	var oldest *gateConn
	for c := range g.conns {
		if c.busy || (owner != "" && c.owner != owner) {
			continue
		}
		if oldest == nil || shedBefore(c, oldest) {
			oldest = c
		}
	}
	return oldest
}

// shedBefore reports whether a is to be shed before b.
func shedBefore(a, b *gateConn) bool {
	if a.served != b.served {
		return !a.served
	}
	return a.since.Before(b.since)
}

func (g *connGate) forgetLocked(c *gateConn) {
	if _, ok := g.conns[c]; !ok {
		return
	}
	delete(g.conns, c)
	g.countLocked(c, -1)
}

// claim moves the connection of r, whose request authenticated as
// identity, from its address's count to the identity's: connections are
// capped per identity once known, so clients behind one address (a
// balancer, or every local client) are not capped together, and one
// identity cannot take the slots of another. Past the identity's cap, its
// oldest idle connection is shed; false means every one of them serves a
// request, and r is to be refused. Without a gate (Handler served by
// another server) or an identity, it does nothing.
func claim(r *http.Request, identity string) bool {
	gc, ok := r.Context().Value(gateConnKey{}).(*gateConn)
	if !ok || identity == "" {
		return true
	}
	g, owner := gc.gate, ownerOf(identity)
	g.mu.Lock()
	if gc.owner == owner {
		g.mu.Unlock()
		return true
	}
	if _, held := g.conns[gc]; !held {
		// Shed between its headers and its handler: its count is gone
		// already, and moving it would leave one on the identity for good.
		g.mu.Unlock()
		return true
	}
	var victim *gateConn
	if g.byOwner[owner] >= g.perIdentity {
		if victim = g.oldestIdle(owner); victim == nil {
			g.mu.Unlock()
			return false
		}
		g.forgetLocked(victim)
	}
	g.countLocked(gc, -1)
	gc.owner = owner
	g.countLocked(gc, +1)
	g.mu.Unlock()
	if victim != nil {
		victim.Conn.Close()
	}
	return true
}

// countLocked adds n to the count of c's owner.
func (g *connGate) countLocked(c *gateConn, n int) {
	if g.byOwner[c.owner] += n; g.byOwner[c.owner] <= 0 {
		delete(g.byOwner, c.owner)
	}
}

// track is the http.Server's ConnState hook.
func (g *connGate) track(c net.Conn, state http.ConnState) {
	gc, ok := c.(*gateConn)
	if !ok {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch state {
	case http.StateHijacked:
		gc.busy, gc.served = true, true
		g.uncountLocked(gc)
		gc.forgetBody()
	case http.StateIdle:
		gc.busy, gc.since = false, time.Now()
		g.uncountLocked(gc)
		gc.headersFrom.Store(0)
		gc.awaiting.Store(true)
		gc.forgetBody()
	case http.StateClosed:
		g.forgetLocked(gc)
		g.uncountLocked(gc)
		gc.forgetBody()
	}
}

// uncountLocked stops counting c among the connections serving a
// request. g.mu is held.
func (g *connGate) uncountLocked(c *gateConn) {
	if c.counted {
		c.counted = false
		g.inRequest.done()
	}
}

type gateConnKey struct{}

// connContext is the http.Server's ConnContext hook: a request's context
// names its connection, for serving.
func (g *connGate) connContext(ctx context.Context, c net.Conn) context.Context {
	if gc, ok := c.(*gateConn); ok {
		return context.WithValue(ctx, gateConnKey{}, gc)
	}
	return ctx
}

// serving marks a connection busy while its handler runs: its headers are
// in, so it holds a request. net/http's StateActive comes earlier, when
// the headers have been read or refused, and a connection refused 431
// lingers in it while it is closed.
func (g *connGate) serving(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gc, ok := r.Context().Value(gateConnKey{}).(*gateConn); ok {
			g.mu.Lock()
			gc.busy, gc.served = true, true
			if !gc.counted {
				gc.counted = true
				g.inRequest.add()
			}
			g.mu.Unlock()
			gc.awaiting.Store(false)
			gc.headersFrom.Store(0)
		}
		next.ServeHTTP(w, r)
	})
}

// Close frees the connection's slot and closes it.
func (c *gateConn) Close() error {
	c.once.Do(func() {
		c.gate.mu.Lock()
		c.gate.forgetLocked(c)
		c.gate.mu.Unlock()
	})
	return c.Conn.Close()
}

// refusedBody is what a connection refused at accept reads, after the
// headers of a 503.
const refusedBody = "Service Unavailable: every connection slot is serving a request now\n"

// refuseConn answers a connection the gate refused and closes it. A fresh
// socket's send buffer is empty, so the short deadline only guards against
// the unexpected: accept never waits on a client.
func refuseConn(c net.Conn) {
	c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	c.Write([]byte("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nRetry-After: 1\r\nContent-Length: " +
		strconv.Itoa(len(refusedBody)) + "\r\n\r\n" + refusedBody))
	c.Close()
}
