package gateway

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// How a forward learns that its owner hangs. An owner may send an
// answer's headers only at its end (a call answered as one JSON body), so
// no bound on the wait for them can tell a long call from a stopped
// replica; nor can one on the wait for an event tell a quiet stream (a
// session's GET stream, a long call's SSE answer) from a stopped replica.
// The forward asks the owner whether it is alive instead, for as long as
// it runs, before the headers and while the answer streams: once it has
// run ownerCheckAfter, and every ownerCheckEvery after, it asks the
// owner's /livez, which the owner answers at once whatever its calls do
// and whether or not it is ready (any answer, a 401 from an owner that
// authenticates or a 503, says it is alive). An owner that does not
// answer within ownerCheckWait (a stopped process, whose kernel still
// accepts connections) does not answer: the forward is cut, and its
// client told to send it again (503), or, once its answer streams, its
// connection closed, so that it opens the stream again.
const (
	ownerCheckAfter = 2 * time.Second
	ownerCheckEvery = 10 * time.Second
	ownerCheckWait  = 5 * time.Second
)

// errOwnerSilent is why a forward to an owner that does not answer is
// cut.
var errOwnerSilent = errors.New("the replica that owns the request does not answer its liveness check")

// ownerWatch checks the owner of one forward while the forward runs.
type ownerWatch struct {
	ctx     context.Context // the forward's, cut with errOwnerSilent
	cut     context.CancelCauseFunc
	running context.Context // done once the forward ended (or was cut)
	finish  context.CancelFunc
	// name and owner say in the log what the forward was for and where.
	name     string
	owner    *url.URL
	streamed atomic.Bool   // the answer's headers came
	ended    chan struct{} // closed when check returned
	closed   sync.Once
}

// watchOwner starts checking owner for a forward of name made under
// parent; the forward runs under the watch's ctx and calls answered when
// the headers come, and end when it is over.
func (g *Gateway) watchOwner(parent context.Context, name string, owner *url.URL) *ownerWatch {
	w := &ownerWatch{name: name, owner: owner, ended: make(chan struct{})}
	w.ctx, w.cut = context.WithCancelCause(parent)
	w.running, w.finish = context.WithCancel(w.ctx)
	go func() {
		defer close(w.ended)
		g.checkOwner(w, &url.URL{Scheme: owner.Scheme, Host: owner.Host, Path: "/livez"})
	}()
	return w
}

// answered notes that the answer's headers came: a cut from now on
// ends the answer as it streams.
func (w *ownerWatch) answered() { w.streamed.Store(true) }

// end stops the checks and releases the forward's context.
func (w *ownerWatch) end() {
	w.closed.Do(func() {
		w.finish()
		<-w.ended
		w.cut(nil)
	})
}

// silent reports whether the forward was cut for its owner not answering.
func (w *ownerWatch) silent() bool { return errors.Is(context.Cause(w.ctx), errOwnerSilent) }

// checkOwner asks livez until the forward ends, and cuts the forward
// when the owner does not answer.
func (g *Gateway) checkOwner(w *ownerWatch, livez *url.URL) {
	wait := ownerCheckAfter
	for {
		t := time.NewTimer(wait)
		select {
		case <-w.running.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if g.ownerSilent(w.running, livez) {
			g.cutSilent(w)
			return
		}
		wait = ownerCheckEvery
	}
}

// cutSilent cuts w's forward, whose owner does not answer, and says so.
func (g *Gateway) cutSilent(w *ownerWatch) {
	what := "answered 503 here"
	if w.streamed.Load() {
		what = "the answer it was streaming is ended here (its client's connection closed, so that the client opens it again)"
	}
	g.log.Warn("the replica that owns a request does not answer (it accepts connections but left its /livez unanswered): "+what+"; check that replica's process (stopped, or stuck?) and its log", "name", w.name, "replica", w.owner.String(), "waited", ownerCheckWait)
	w.cut(errOwnerSilent)
}

// ownerCheckShared is how long an owner's answer to a check stands for
// every forward to it: the forwards to one owner, however many streams
// they carry, ask its /livez about once a second at most.
const ownerCheckShared = time.Second

// ownerChecks shares the checks of each owner among its forwards: one
// check at a time per owner, whose outcome every forward waiting on it
// takes, and whose answer stands ownerCheckShared.
type ownerChecks struct {
	mu   sync.Mutex
	of   map[string]*ownerCheck // by /livez URL
	last time.Time              // when of was last swept of stale entries
}

// ownerCheck is the latest check of one owner.
type ownerCheck struct {
	done    chan struct{} // closed when the check in flight ended
	silent  bool          // its outcome, once done
	endedAt time.Time
}

// ownerSilent reports whether the owner at livez left a check unanswered
// for ownerCheckWait, asking it unless a check is in flight (then its
// outcome is taken) or it answered within ownerCheckShared. It reports
// false once ctx (the forward's) ended.
func (g *Gateway) ownerSilent(ctx context.Context, livez *url.URL) bool {
	c := g.ownerChecks.current(livez.String(), func() bool { return g.probeOwner(livez) })
	select {
	case <-c.done:
		return c.silent && ctx.Err() == nil
	case <-ctx.Done():
		return false
	}
}

// current returns the check of key to take: the last one, when in flight
// or answered within ownerCheckShared, or a new one running probe.
func (oc *ownerChecks) current(key string, probe func() bool) *ownerCheck {
	oc.mu.Lock()
	defer oc.mu.Unlock()
	now := time.Now()
	if c, ok := oc.of[key]; ok && !c.stale(now) {
		return c
	}
	oc.sweep(now)
	c := &ownerCheck{done: make(chan struct{})}
	oc.of[key] = c
	go func() {
		silent := probe()
		oc.mu.Lock()
		c.silent, c.endedAt = silent, time.Now()
		oc.mu.Unlock()
		close(c.done)
	}()
	return c
}

// stale reports whether c can no longer stand for a check at now: it
// ended silent (each forward sees that once), or answered too long ago.
// oc.mu must be held.
func (c *ownerCheck) stale(now time.Time) bool {
	if c.endedAt.IsZero() {
		return false // in flight
	}
	return c.silent || now.Sub(c.endedAt) >= ownerCheckShared
}

// sweep drops the stale checks once a minute, so that the owners of
// forwards long over (replicas gone) are not kept. oc.mu must be held.
func (oc *ownerChecks) sweep(now time.Time) {
	if oc.of == nil {
		oc.of = map[string]*ownerCheck{}
	}
	if now.Sub(oc.last) < time.Minute {
		return
	}
	oc.last = now
	for key, c := range oc.of {
		if c.stale(now) {
			delete(oc.of, key)
		}
	}
}

// probeOwner asks the owner at livez once. Only silence counts: a refused
// or closed connection may be an owner shutting down in order, which
// still answers the calls it has. The check runs to its end whichever
// forward started it, since others may be waiting on it, or until the
// gateway closes.
func (g *Gateway) probeOwner(livez *url.URL) bool {
	ctx, cancel := context.WithTimeout(context.Background(), ownerCheckWait)
	defer cancel()
	go func() {
		select {
		case <-g.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, livez.String(), nil)
	if err != nil {
		return false
	}
	resp, err := g.replicaTransport().RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		return false
	}
	var ne net.Error
	return errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() && ctx.Err() == nil
}
