package gateway

import (
	"sync"
	"time"
)

// The edge's time limits on a connection: its headers (HeaderTimeout, from
// accept or from a keep-alive request's first byte), its body (the rule of
// deadlineBody) and its idleness between requests (keepAliveIdle). The
// gate enforces them on a clock that looks at every connection a few times
// a second, not with a read deadline per request: setting a deadline adds
// a runtime timer, and a timer sooner than any other on its P makes the Go
// runtime wake a sleeping thread to watch it, which cost every request a
// thread wakeup (a futex wake, a context switch and a spinning thread's
// CPU) for limits that almost never fire.

// keepAliveIdle is how long a keep-alive connection may sit idle between
// requests (an open SSE stream is a request in progress, not idle); under
// pressure the gate sheds idle ones sooner.
const keepAliveIdle = 2 * time.Minute

// edgeTimes are the limits the gate's clock enforces, and its tick.
type edgeTimes struct {
	header, body, idle time.Duration
	tick               time.Duration
}

// newEdgeTimes ticks at a quarter of the shortest limit, between 10 ms and
// 250 ms: a limit is enforced within a quarter of itself, at most 250 ms
// late, and an idle gate wakes four times a second.
func newEdgeTimes(header, body time.Duration) edgeTimes {
	tick := min(header, body) / 4 // keepAliveIdle is longer than both
	return edgeTimes{header: header, body: body, idle: keepAliveIdle, tick: min(max(tick, 10*time.Millisecond), 250*time.Millisecond)}
}

// startClock runs the gate's clock until Close.
func (g *connGate) startClock(times edgeTimes) {
	g.times = times
	stop := make(chan struct{})
	g.stopClock = sync.OnceFunc(func() { close(stop) })
	go func() {
		t := time.NewTicker(times.tick)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				g.sweep(now)
			}
		}
	}()
}

// Close stops the clock and closes the listener.
func (g *connGate) Close() error {
	if g.stopClock != nil {
		g.stopClock()
	}
	return g.Listener.Close()
}

// sweep enforces the limits at now: a connection past its header or idle
// limit is closed, as net/http closes one whose read deadline passed; a
// body past its deadline is cut (its read fails as on a deadline, and the
// request is answered 408).
func (g *connGate) sweep(now time.Time) {
	var shut []*gateConn
	var late []*deadlineBody
	g.mu.Lock()
	for c := range g.conns {
		if c.busy {
			if b := c.body.Load(); b != nil && now.After(b.due()) {
				late = append(late, b)
			}
			continue
		}
		from := c.headersFrom.Load()
		if (from != 0 && now.Sub(time.Unix(0, from)) > g.times.header) || (from == 0 && c.served && now.Sub(c.since) > g.times.idle) {
			g.forgetLocked(c)
			shut = append(shut, c)
		}
	}
	g.mu.Unlock()
	for _, c := range shut {
		c.Conn.Close()
	}
	for _, b := range late {
		b.cut()
	}
}
