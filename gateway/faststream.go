//lint:file-ignore SA1019 MCP 2026-07-28 deprecates logging, sampling and roots (SEP-2577) but keeps them working for at least a year; the fast path must know whether a client offers them.

package gateway

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
)

// fastStream is the response stream of a POST the fast path answers,
// framed as the SDK's handler frames its responses (sdkwire's
// TestContractHTTPCallResponse): a call answered before anything else
// was sent goes out as one application/json body, as the SDK answers
// with JSONResponse; otherwise the response is an SSE stream, as the
// SDK's default (a priming event sent once the call has run primeFlush,
// progress before the result). Every event is kept in the SDK's event
// store under the same session and ids, so a client that loses the
// stream resumes it with Last-Event-ID as it would one of the SDK's
// (serveMCP). It is the call's notifier.
type fastStream struct {
	id, session string
	version     string         // the POST's protocol version, as the SDK reads it
	store       mcp.EventStore // nil: events have no ids

	mu       sync.Mutex
	w        http.ResponseWriter // the request writing the stream, nil when none; guarded by mu
	sse      bool                // w's response is an SSE stream (its headers are set); guarded by mu
	pending  []byte              // events not yet written to w (the priming event); guarded by mu
	next     int                 // the next event's index; guarded by mu
	finished bool                // the response was written; guarded by mu
	done     chan struct{}       // closed once the response is written
	primer   *time.Timer         // sends the priming event; guarded by mu
	cancel   context.CancelCauseFunc
	level    func() string // the level the session's client set, "" before it sets one
	asks     *fastAsks     // the gateway's questions awaiting answers; nil: the client cannot be asked (stateless)
}

var (
	_ notifier = (*fastStream)(nil)
	_ asked    = (*fastStream)(nil)
)

// stored reports whether the stream's events are kept for a resume and
// carry ids: with an event store, below 2026-07-28.
func (s *fastStream) stored() bool { return s.store != nil && s.version < "2026-07-28" }

// prime opens the stream as the SDK does: the stream is opened in the
// event store, and a priming event made where the SDK writes one. It is
// sent only if the call has not ended within primeFlush: the priming
// event only matters to a client whose stream drops before the result.
func (s *fastStream) prime(ctx context.Context) {
	if !s.stored() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.store.Open(ctx, s.session, s.id) // the in-memory store never fails
	if sdkwire.Primes(s.version, true) {
		s.store.Append(ctx, s.session, s.id, nil)
		s.pending = sdkwire.AppendEvent(nil, "prime", sdkwire.EventID(s.id, s.next), nil)
		s.next++
		s.primer = time.AfterFunc(primeFlush, s.flush)
	}
}

// primeFlush is how long the priming event waits for the result.
const primeFlush = 10 * time.Millisecond

// flush sends the priming event, unless the response went out.
func (s *fastStream) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w != nil && !s.finished {
		s.streamLocked()
		http.NewResponseController(s.w).Flush()
	}
}

// streamLocked makes w's response an SSE stream, and writes what is
// pending. s.mu is held and s.w is set.
func (s *fastStream) streamLocked() {
	if !s.sse {
		sdkwire.SetResponseHeaders(s.w.Header(), false)
		s.sse = true
	}
	if len(s.pending) > 0 {
		s.w.Write(s.pending) // a failed write: the client left, its request's context ends too
		s.pending = nil
	}
}

// storeLocked keeps data as the stream's next event, and returns its id.
// s.mu is held.
func (s *fastStream) storeLocked(ctx context.Context, data []byte) string {
	id := ""
	if s.stored() {
		id = sdkwire.EventID(s.id, s.next)
		s.store.Append(ctx, s.session, s.id, data) // the in-memory store never fails
	}
	s.next++
	return id
}

// send sends one message on the stream, flushed, unless the response
// went out.
func (s *fastStream) send(ctx context.Context, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return
	}
	id := s.storeLocked(ctx, data)
	if s.w == nil {
		return
	}
	s.streamLocked()
	s.w.Write(sdkwire.AppendEvent(nil, "message", id, data))
	http.NewResponseController(s.w).Flush()
}

// finish sends the response, the stream's last message: the whole body
// when nothing was sent before it, else its last event. It is not flushed:
// the request holding the stream returns at once, and the server sends it
// with the end of the body, in one write. A status (a 2026-07-28 error's,
// sdkwire.ErrorStatus) writes data as the SDK writes it then: one
// application/json body with that status, or when the stream had begun,
// data as is.
func (s *fastStream) finish(ctx context.Context, data []byte, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.primer != nil {
		s.primer.Stop()
	}
	id := s.storeLocked(ctx, data)
	s.finished = true
	close(s.done)
	switch {
	case s.w == nil:
	case status != 0:
		if !s.sse {
			sdkwire.SetResponseHeaders(s.w.Header(), false)
			s.w.Header().Set("Content-Type", "application/json")
			s.w.WriteHeader(status)
		}
		s.w.Write(data)
	case !s.sse:
		sdkwire.SetResponseHeaders(s.w.Header(), true)
		s.w.Write(data)
	default:
		s.w.Write(sdkwire.AppendEvent(nil, "message", id, data))
	}
}

// detach ends the writing to w, the request that held the stream.
func (s *fastStream) detach(w http.ResponseWriter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == w {
		s.w = nil
	}
}

// resume replays to w the events after index last and, if the response
// has not gone out yet, makes w the stream's writer; it reports whether w
// now holds the stream (the caller then waits for done).
func (s *fastStream) resume(ctx context.Context, w http.ResponseWriter, last int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w != nil {
		http.Error(w, "stream ID conflicts with ongoing stream", http.StatusConflict)
		return false
	}
	sdkwire.SetResponseHeaders(w.Header(), false)
	s.sse, s.pending = true, nil // the POST's own writer is gone
	for data, err := range s.store.After(ctx, s.session, s.id, last) {
		if err != nil {
			http.Error(w, "failed to replay events", http.StatusBadRequest)
			return false
		}
		if len(data) == 0 {
			continue // the priming event is not replayed, nor counted (as the SDK does)
		}
		last++
		if _, err := w.Write(sdkwire.AppendEvent(nil, "message", sdkwire.EventID(s.id, last), data)); err != nil {
			return false
		}
	}
	if s.finished {
		return false
	}
	http.NewResponseController(w).Flush()
	s.w = w
	return true
}

// NotifyProgress sends a progress notification on the stream, as the
// SDK's session sends one related to the stream's request.
func (s *fastStream) NotifyProgress(ctx context.Context, p *mcp.ProgressNotificationParams) error {
	data, err := sdkwire.NotificationJSON("notifications/progress", p)
	if err != nil {
		return err
	}
	s.send(ctx, data)
	return nil
}

// Log sends a log message on the stream when the SDK's session would send
// it, for the level the client set (sdkwire.LogPasses).
func (s *fastStream) Log(ctx context.Context, p *mcp.LoggingMessageParams) error {
	if !sdkwire.LogPasses(string(p.Level), s.level()) {
		return nil
	}
	data, err := sdkwire.NotificationJSON("notifications/message", p)
	if err != nil {
		return err
	}
	s.send(ctx, data)
	return nil
}
