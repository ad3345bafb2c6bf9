package gateway

import (
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// DefaultMaxConnsPerAddr is Options.MaxConnsPerAddr's default.
const DefaultMaxConnsPerAddr = 512

// connGate is the listener ServeListener serves on: it bounds the
// connections served at once, in total and per client address, without ever
// blocking accept. A connection that has sent no request yet, or sits idle
// between requests, holds a slot and nothing else, so when a new connection
// finds no slot the oldest such one is shed: a flood of silent or
// header-dribbling sockets cannot keep an authorized client out. Only when
// every slot serves a request is the new connection refused, with a 503.
//
// Its track method is the http.Server's ConnState hook; the gate learns from
// it which connections serve a request. Safe for concurrent use.
type connGate struct {
	net.Listener
	max, perAddr int
	log          *slog.Logger

	mu       sync.Mutex
	conns    map[*gateConn]struct{} // guarded by mu
	byAddr   map[string]int         // guarded by mu
	refused  int                    // since the last warning; guarded by mu
	warnedAt time.Time              // guarded by mu
}

// gateConn is a connection the gate admitted.
type gateConn struct {
	net.Conn
	gate *connGate
	addr string // the client's IP
	once sync.Once

	// guarded by gate.mu
	busy   bool      // serving a request (or hijacked)
	served bool      // has served a request
	since  time.Time // when it was accepted or last became idle
}

func newConnGate(ln net.Listener, max, perAddr int, log *slog.Logger) *connGate {
	return &connGate{Listener: ln, max: max, perAddr: perAddr, log: log,
		conns: make(map[*gateConn]struct{}), byAddr: make(map[string]int)}
}

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
	gc := &gateConn{Conn: c, gate: g, addr: hostOnly(c.RemoteAddr().String()), since: time.Now()}
	g.mu.Lock()
	victim, ok := g.makeRoom(gc.addr)
	if ok {
		g.conns[gc] = struct{}{}
		g.byAddr[gc.addr]++
	}
	g.mu.Unlock()
	if victim != nil {
		victim.Conn.Close()
		g.log.Debug("HTTP connection shed for a new one", "client", victim.addr, "idle", time.Since(victim.since).Round(time.Millisecond))
	}
	if !ok {
		g.warnRefused(gc.addr)
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

// makeRoom decides, under mu, whether a connection from addr may be served:
// at once, or by shedding the returned victim (already forgotten).
func (g *connGate) makeRoom(addr string) (victim *gateConn, ok bool) {
	switch {
	case g.byAddr[addr] >= g.perAddr:
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

// oldestIdle returns the connection to shed, from addr ("" for any
// address): of those not serving a request, one that never sent a request
// before a keep-alive one that did (a client's), the one waiting longest
// first; nil when there is none.
func (g *connGate) oldestIdle(addr string) *gateConn {
	var oldest *gateConn
	for c := range g.conns {
		if c.busy || (addr != "" && c.addr != addr) {
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
	if g.byAddr[c.addr]--; g.byAddr[c.addr] <= 0 {
		delete(g.byAddr, c.addr)
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
	case http.StateActive, http.StateHijacked:
		gc.busy, gc.served = true, true
	case http.StateIdle:
		gc.busy, gc.since = false, time.Now()
	case http.StateClosed:
		g.forgetLocked(gc)
	}
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
