package gateway

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// How a forward learns that its owner hangs. An owner may send an
// answer's headers only at its end (a call answered as one JSON body), so
// no bound on the wait for them can tell a long call from a stopped
// replica. The forward asks the owner whether it is alive instead: once
// it has waited ownerCheckAfter for the headers, and every
// ownerCheckEvery after, it asks the owner's /livez, which the owner
// answers at once whatever its calls do and whether or not it is ready
// (any answer, a 401 from an owner that authenticates or a 503, says it
// is alive). An
// owner that does not answer within ownerCheckWait (a stopped process,
// whose kernel still accepts connections) does not answer: the forward is
// cut and its client told to send it again.
const (
	ownerCheckAfter = 2 * time.Second
	ownerCheckEvery = 10 * time.Second
	ownerCheckWait  = 5 * time.Second
)

// errOwnerSilent is why a forward to an owner that does not answer is
// cut.
var errOwnerSilent = errors.New("the replica that owns the request does not answer its liveness check")

// ownerWatch checks the owner of one forward while the forward waits for
// the answer's headers.
type ownerWatch struct {
	ctx    context.Context // the forward's, cut with errOwnerSilent
	cut    context.CancelCauseFunc
	heard  context.Context // done once the headers came (or the forward ended)
	hear   context.CancelFunc
	ended  chan struct{} // closed when check returned
	closed sync.Once
}

// watchOwner starts checking owner for a forward made under parent; the
// forward runs under the watch's ctx and calls answered when the headers
// come, and end when it is over.
func (g *Gateway) watchOwner(parent context.Context, owner *url.URL) *ownerWatch {
	w := &ownerWatch{ended: make(chan struct{})}
	w.ctx, w.cut = context.WithCancelCause(parent)
	w.heard, w.hear = context.WithCancel(w.ctx)
	go func() {
		defer close(w.ended)
		g.checkOwner(w, &url.URL{Scheme: owner.Scheme, Host: owner.Host, Path: "/livez"})
	}()
	return w
}

// answered stops the checks: the owner answered.
func (w *ownerWatch) answered() { w.hear() }

// end stops the checks and releases the forward's context.
func (w *ownerWatch) end() {
	w.closed.Do(func() {
		w.hear()
		<-w.ended
		w.cut(nil)
	})
}

// silent reports whether the forward was cut for its owner not answering.
func (w *ownerWatch) silent() bool { return errors.Is(context.Cause(w.ctx), errOwnerSilent) }

// checkOwner asks livez until the headers come, and cuts the forward when
// the owner does not answer.
func (g *Gateway) checkOwner(w *ownerWatch, livez *url.URL) {
	wait := ownerCheckAfter
	for {
		t := time.NewTimer(wait)
		select {
		case <-w.heard.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if g.ownerSilent(w.heard, livez) {
			w.cut(errOwnerSilent)
			return
		}
		wait = ownerCheckEvery
	}
}

// ownerSilent reports whether the owner at livez left a check unanswered
// for ownerCheckWait. Only silence counts: a refused or closed connection
// may be an owner shutting down in order, which still answers the calls it
// has.
func (g *Gateway) ownerSilent(ctx context.Context, livez *url.URL) bool {
	cctx, cancel := context.WithTimeout(ctx, ownerCheckWait)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodGet, livez.String(), nil)
	if err != nil {
		return false
	}
	resp, err := g.replicaTransport().RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		return false
	}
	var ne net.Error
	return ctx.Err() == nil && (cctx.Err() != nil || errors.As(err, &ne) && ne.Timeout())
}
