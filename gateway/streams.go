package gateway

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultResumeGrace is Options.ResumeGrace's default.
const DefaultResumeGrace = 30 * time.Second

// streamHeader tags each POST with the request stream it opens, so a call
// knows which stream waits for its result (the go-sdk hands a request's
// HTTP header to the handler as RequestExtra.Header). The gateway sets it;
// a value the client sent is dropped.
const streamHeader = "Mcpbridge-Request-Stream"

// errStreamGone cancels the calls of an HTTP client that left without
// notifications/cancelled: nobody is left to take their results.
var errStreamGone = errors.New("the client's request stream ended before the result")

// vanishing follows the request streams of HTTP clients that disconnect
// before their results: the go-sdk keeps such calls running (for a
// stream the client may resume), so without it a client that vanishes
// leaves its calls, and its backends' work, running for their whole
// timeout.
type vanishing struct {
	seq atomic.Uint64

	mu sync.Mutex
	// awaiting holds, by session id, the dropped streams whose client may
	// still resume them; guarded by mu.
	awaiting map[string][]awaited
	// gone holds the streams given up on, for a minute: a call of theirs
	// that starts only now (its request was queued) is cancelled at once;
	// guarded by mu.
	gone map[string]bool
	// drops counts the drops awaited so far; guarded by mu.
	drops uint64
	// timer, when set, runs graces in place of later (tests fire them by
	// hand).
	timer func(d time.Duration, f func())
	// timers are those pending, stopped by stop; guarded by mu.
	timers  map[*time.Timer]struct{}
	stopped bool // guarded by mu
}

// awaited is a dropped stream awaiting a resume, and which of its drops
// (a grace of an earlier drop must not cut a later one's short).
type awaited struct {
	stream string
	drop   uint64
}

// after runs the grace f after d.
func (v *vanishing) after(d time.Duration, f func()) {
	if v.timer != nil {
		v.timer(d, f)
		return
	}
	v.later(d, f)
}

// later runs f after d unless stop comes first.
func (v *vanishing) later(d time.Duration, f func()) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.stopped {
		return
	}
	if v.timers == nil {
		v.timers = make(map[*time.Timer]struct{})
	}
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		v.mu.Lock()
		delete(v.timers, t)
		v.mu.Unlock()
		f()
	})
	v.timers[t] = struct{}{}
}

// stop stops the pending timers and refuses new ones (the gateway is
// closing: its calls are cancelled anyway).
func (v *vanishing) stop() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.stopped = true
	for t := range v.timers {
		t.Stop()
	}
	clear(v.timers)
}

// goneFor is how long a given-up stream is remembered: far longer than a
// queued request waits to start.
const goneFor = time.Minute

// serveMCP serves one request of the Streamable HTTP endpoint, following
// the stream a POST opens: when its client disconnects before the
// response, the calls it carried are cancelled, at once if the stream
// cannot be resumed, else after Options.ResumeGrace unless the client
// resumed a stream of its session by then (and if the resuming GET drops
// too, after another grace).
func (g *Gateway) serveMCP(w http.ResponseWriter, r *http.Request) {
	delete(r.Header, streamHeader) // Del, with the key canonical already
	if r.Method == http.MethodGet && first(r.Header, "Last-Event-Id") != "" {
		session := first(r.Header, "Mcp-Session-Id")
		spared := g.resumed(session)
		g.engine.ServeHTTP(w, r)
		// However the resume ended (its client left, its stream ended, or
		// the SDK refused it: 409 while the dropped POST's handler still
		// holds the stream), the streams it spared whose calls still run
		// get another grace, for a client that tries again. Those whose
		// calls ended are let go: a client resuming again and again kept
		// every stream it ever dropped awaiting.
		for _, stream := range spared {
			if g.inFlightOn(stream) {
				g.awaitGrace(session, stream)
			}
		}
		return
	}
	if r.Method == http.MethodDelete {
		g.serveDelete(w, r)
		return
	}
	if r.Method != http.MethodPost {
		g.engine.ServeHTTP(w, r)
		return
	}
	// Watched while served: in stateless mode the go-sdk returns only
	// once the request's calls have ended.
	watch := &clientWatch{g: g, r: r, stream: strconv.FormatUint(g.vanish.seq.Add(1), 36)}
	watch.header[0] = watch.stream
	r.Header[streamHeader] = watch.header[:] // Set, with the key canonical already
	stop := context.AfterFunc(r.Context(), watch.leave)
	if t, ok := g.engine.(*httpTransport); ok {
		t.serve(w, r, watch)
	} else {
		g.engine.ServeHTTP(w, r)
	}
	// The transport may end the response before the request's context
	// (its write to a client that left failed first): calls still in
	// flight then lost their stream all the same.
	if stop() && g.inFlightOn(watch.stream) {
		watch.dropped()
	}
	stop() // answered: its calls have ended, or wait for a resume
}

// clientWatch watches the client of one POST with one context.AfterFunc
// for all its leaving does: the gateway's (dropped) and, on a stateful
// session of the gateway's own transport, the session's (postWatch),
// which joins it instead of arming an AfterFunc of its own (each is an
// allocation or three and a registration with the request's context, on
// every call). It holds what the POST's path would allocate besides:
// the stream header's value, and the session's watch.
type clientWatch struct {
	g      *Gateway
	r      *http.Request
	stream string
	header [1]string // the value of r's streamHeader
	joined postWatch // the session's watch, when it joins (servingPOST)

	mu   sync.Mutex
	left bool       // the client left; guarded by mu
	post *postWatch // the session's, told first; guarded by mu
	// input ends the input of a stateless POST's session, told last
	// (endInput); guarded by mu.
	input func()
}

// leave is what the client's leaving does.
func (c *clientWatch) leave() {
	c.mu.Lock()
	c.left = true
	post, input := c.post, c.input
	c.mu.Unlock()
	if post != nil {
		post.leave()
	}
	c.dropped()
	if input != nil {
		input()
	}
}

// dropped gives up on the POST's stream, or awaits a resume of it.
func (c *clientWatch) dropped() {
	if c.g.resumable(c.r) {
		c.g.awaitGrace(first(c.r.Header, "Mcp-Session-Id"), c.stream)
	} else {
		c.g.giveUp(c.stream)
	}
}

// join has post told when the client leaves: at once if it has left.
func (c *clientWatch) join(post *postWatch) {
	if keepUnlessLeft(c, &c.post, post) {
		post.leave()
	}
}

// endInput has end, the end of a stateless POST's session input, done
// when the client leaves (at once if it has left), after the stream is
// given up: the session's end cancels what giveUp does not reach yet, a
// call the take runs on the POST's goroutine that is not in flight (still
// waiting for readiness or in the Gate).
func (c *clientWatch) endInput(end func()) {
	if keepUnlessLeft(c, &c.input, end) {
		end()
	}
}

// keepUnlessLeft stores v in slot, a field of c that leave reads, unless
// the client has left; it reports whether it has, for the caller to act
// at once.
func keepUnlessLeft[T any](c *clientWatch, slot *T, v T) (left bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.left {
		*slot = v
	}
	return c.left
}

// inFlightOn reports whether a call that arrived on stream is in flight.
func (g *Gateway) inFlightOn(stream string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.onStream[stream] > 0
}

// awaitGrace gives up on stream of session after Options.ResumeGrace,
// unless its client resumes a stream of the session by then.
func (g *Gateway) awaitGrace(session, stream string) {
	drop := g.awaitResume(session, stream)
	g.vanish.after(cmp.Or(g.opts.ResumeGrace, DefaultResumeGrace), func() {
		if g.forget(session, awaited{stream, drop}) {
			g.giveUp(stream)
		}
	})
}

// resumable reports whether the client of POST r could resume its stream
// to get the results: not in stateless mode, not for a JSON response, not
// on protocol 2026-07-28, which dropped resumable streams (SEP-2575).
func (g *Gateway) resumable(r *http.Request) bool {
	if _, sse := accepts(r.Header.Values("Accept")); g.stateless(r) || !sse {
		return false
	}
	version := first(r.Header, "Mcp-Protocol-Version")
	return version == "" || version < "2026-07-28"
}

// streamOf returns the request stream a request arrived on, "" when not
// over HTTP.
func streamOf(extra *mcp.RequestExtra) string {
	if extra == nil || extra.Header == nil {
		return ""
	}
	return first(extra.Header, streamHeader)
}

// awaitResume records that stream of session dropped before its
// results, and returns which drop this is. A session awaits at most
// eventStreamsPerSession streams, as many as the event store keeps to
// resume: past that, the oldest is given up at once.
func (g *Gateway) awaitResume(session, stream string) uint64 {
	g.vanish.mu.Lock()
	if g.vanish.awaiting == nil {
		g.vanish.awaiting = map[string][]awaited{}
	}
	g.vanish.drops++
	drop, drops := g.vanish.drops, g.vanish.awaiting[session]
	var oldest string
	if len(drops) >= eventStreamsPerSession {
		oldest = drops[0].stream
		drops = slices.Delete(drops, 0, 1)
	}
	g.vanish.awaiting[session] = append(drops, awaited{stream, drop})
	g.vanish.mu.Unlock()
	if oldest != "" {
		g.giveUp(oldest)
	}
	return drop
}

// forgetSession lets go of the streams session awaited: it ended, and its
// calls with it.
func (v *vanishing) forgetSession(session string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.awaiting, session)
}

// resumed spares the dropped streams of session, and returns them: its
// client is back.
func (g *Gateway) resumed(session string) []string {
	g.vanish.mu.Lock()
	defer g.vanish.mu.Unlock()
	var spared []string
	for _, a := range g.vanish.awaiting[session] {
		spared = append(spared, a.stream)
	}
	delete(g.vanish.awaiting, session)
	return spared
}

// forget removes the drop a from those awaiting a resume and reports
// whether it was still there (its client never came back).
func (g *Gateway) forget(session string, a awaited) bool {
	g.vanish.mu.Lock()
	defer g.vanish.mu.Unlock()
	drops := g.vanish.awaiting[session]
	i := slices.Index(drops, a)
	if i < 0 {
		return false
	}
	if drops = slices.Delete(drops, i, i+1); len(drops) == 0 {
		delete(g.vanish.awaiting, session)
	} else {
		g.vanish.awaiting[session] = drops
	}
	return true
}

// giveUp cancels the calls of stream, now and for a minute to come.
func (g *Gateway) giveUp(stream string) {
	g.vanish.mu.Lock()
	if g.vanish.gone == nil {
		g.vanish.gone = map[string]bool{}
	}
	g.vanish.gone[stream] = true
	g.vanish.mu.Unlock()
	g.vanish.later(goneFor, func() {
		g.vanish.mu.Lock()
		delete(g.vanish.gone, stream)
		g.vanish.mu.Unlock()
	})
	g.cancelStream(stream, errStreamGone)
}

// streamGone reports whether stream was given up on.
func (g *Gateway) streamGone(stream string) bool {
	if stream == "" {
		return false
	}
	g.vanish.mu.Lock()
	defer g.vanish.mu.Unlock()
	return g.vanish.gone[stream]
}

// cancelStream cancels the calls in flight that arrived on stream.
func (g *Gateway) cancelStream(stream string, cause error) {
	if n := g.cancelWhere(func(c *inflight) bool { return c.stream == stream }, cause); n > 0 {
		g.log.Debug("client left before its results: calls cancelled", "stream", stream, "calls", n)
	}
}
