package gateway

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
)

// The HTTP edge: what every request meets before the gateway serves it.
// Nothing here reads a body before the request is authorized, no body read
// waits without a deadline, and a refused request's connection closes at
// once.

// DefaultBodyTimeout is Options.BodyTimeout's default.
const DefaultBodyTimeout = 10 * time.Second

// maxHeaderBytes caps a request's headers; net/http allows 4 KiB more, so
// a request never holds more than 64 KiB of headers.
const maxHeaderBytes = 60 << 10

// maxBody bounds a POST body to /mcp: the SDK's own limit, enforced before
// the SDK reads it.
const maxBody = mcp.DefaultMaxRequestBodyBytes

// refuse answers a request the gateway will not serve and closes its
// connection at once. The expired read deadline matters: after the handler
// returns, net/http drains up to 256 KiB of a body the client declared but
// never sent, waiting for it without bound.
func refuse(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Connection", "close")
	http.Error(w, msg, status)
	http.NewResponseController(w).SetReadDeadline(time.Now())
}

// minBodyRate is the slowest a body may arrive on average, once
// bodyGrace has passed: a body dribbled a byte at a time is cut within
// seconds, not at BodyTimeout, so a client cannot hold connections (and
// handlers) for long by sending slowly, whoever it is.
const (
	minBodyRate = 1 << 10 // bytes per second
	bodyGrace   = 2 * time.Second
)

// bodyDeadline bounds the time a request's body may take to arrive, from
// the moment its headers are read: BodyTimeout in all, and bodyGrace plus
// a second per minBodyRate bytes received so far.
func (g *Gateway) bodyDeadline(next http.Handler) http.Handler {
	timeout := cmp.Or(g.opts.BodyTimeout, DefaultBodyTimeout)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			b := &deadlineBody{ReadCloser: r.Body, w: w, start: time.Now(), timeout: timeout, length: r.ContentLength}
			if b.watch(r) == nil {
				r.Body = b
			}
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody holds its request's body to bodyDeadline's rule until it
// is read to its end (or to its declared length): a response streamed for
// long after it (SSE) must not have its request cancelled by net/http's
// background read timing out. The gate's clock enforces the rule on the
// connections it serves (edgeclock.go); on a server of another's, a read
// deadline does.
type deadlineBody struct {
	io.ReadCloser
	w       http.ResponseWriter // its response, whose controller sets a read deadline
	start   time.Time
	timeout time.Duration
	length  int64        // declared, -1 when unknown
	got     atomic.Int64 // bytes read so far

	gc       *gateConn // the connection whose gate's clock watches it; nil for a read deadline
	deadline time.Time // the read deadline set, without a clock

	mu   sync.Mutex // orders the clock's cut and the body's end
	done bool       // read to its end, or no longer watched; guarded by mu
	late bool       // the clock cut it; guarded by mu
}

// watch has the body's rule enforced: by its gate's clock when it came
// through a gate that runs one, else by a read deadline.
func (b *deadlineBody) watch(r *http.Request) error {
	if gc, ok := r.Context().Value(gateConnKey{}).(*gateConn); ok && gc.gate.stopClock != nil {
		b.gc = gc
		gc.body.Store(b)
		return nil
	}
	return b.extend()
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	got := b.got.Add(int64(n))
	switch {
	case b.done:
	case errors.Is(err, io.EOF) || got == b.length:
		b.end()
	case n > 0 && b.gc == nil:
		b.extend()
	}
	return n, err
}

// due is when the rest of the body is due, given the bytes received.
func (b *deadlineBody) due() time.Time {
	earned := bodyGrace + time.Duration(b.got.Load())*time.Second/minBodyRate
	return b.start.Add(min(earned, b.timeout))
}

// extend moves the read deadline to due, when that is a quarter second or
// more past the one set (a deadline per read would cost a timer reset for
// every small read).
func (b *deadlineBody) extend() error {
	d := b.due()
	if !b.deadline.IsZero() && d.Sub(b.deadline) < time.Second/4 {
		return nil
	}
	b.deadline = d
	return http.NewResponseController(b.w).SetReadDeadline(d)
}

// end lifts the rule: the body is in.
func (b *deadlineBody) end() {
	if b.gc == nil {
		b.done = true
		http.NewResponseController(b.w).SetReadDeadline(time.Time{})
		return
	}
	b.gc.body.CompareAndSwap(b, nil)
	if b.forget() {
		// The clock cut it as its last bytes came: they came in time. The
		// background read net/http starts at the body's end may already
		// have failed on the cut, which cancels the request as if its
		// client had left: a body must end within a tick of its limit
		// for that, as a read deadline could fire as the last bytes came.
		b.gc.Conn.SetReadDeadline(time.Time{})
	}
}

// forget stops the clock from cutting the body, and reports whether it
// already did.
func (b *deadlineBody) forget() (late bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done = true
	return b.late
}

// cut is the clock's, once the body is past due: its pending and next
// reads fail as on a passed read deadline, so the request is answered 408
// and its connection closed (or, after its handler, net/http stops
// draining it).
func (b *deadlineBody) cut() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.done {
		b.late = true
		b.gc.Conn.SetReadDeadline(aLongTimeAgo)
	}
}

// aLongTimeAgo is a read deadline that has passed.
var aLongTimeAgo = time.Unix(1, 0)

// streamBudget bounds the SSE GET streams open at once to Options.MaxStreams,
// so that they never take every connection slot: a new client always finds
// one for its POSTs; and one identity's (one address's, without
// identities) to three quarters of them, so that it cannot take every
// stream slot from the others.
func (g *Gateway) streamBudget(next http.Handler) http.Handler {
	limit := g.maxStreams()
	share := max(1, limit-limit/4)
	var (
		mu   sync.Mutex
		open int
		held = map[holder]int{}
	)
	take := func(h holder) string {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case open >= limit:
			return fmt.Sprintf("%d event streams are open, the gateway's limit", limit)
		case held[h] >= share:
			return fmt.Sprintf("%d event streams of yours are open, the gateway's limit for one client", share)
		}
		open++
		held[h]++
		return ""
	}
	release := func(h holder) {
		mu.Lock()
		defer mu.Unlock()
		open--
		if held[h]--; held[h] <= 0 {
			delete(held, h)
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			next.ServeHTTP(w, r)
			return
		}
		h := g.holderOf(r.Context(), nil)
		if full := take(h); full != "" {
			w.Header().Set("Retry-After", "5")
			refuse(w, http.StatusServiceUnavailable, "Service Unavailable: "+full+"; retry later")
			return
		}
		defer release(h)
		next.ServeHTTP(w, r)
	})
}

// maxConns is Options.MaxConnections or its default.
func (g *Gateway) maxConns() int { return cmp.Or(g.opts.MaxConnections, DefaultMaxConnections) }

// maxStreams is Options.MaxStreams or its default, half the connections.
func (g *Gateway) maxStreams() int { return cmp.Or(g.opts.MaxStreams, max(1, g.maxConns()/2)) }

// maxConnsPerAddr is Options.MaxConnsPerAddr or its default, three
// quarters of the connections: above the stream budget, so that a client
// address whose streams take every stream slot (all local clients share
// 127.0.0.1) still has slots for its POSTs, and below the total, so that
// one address never holds every slot with requests it keeps open.
func (g *Gateway) maxConnsPerAddr() int {
	return cmp.Or(g.opts.MaxConnsPerAddr, max(1, g.maxConns()*3/4))
}

// maxConnsPerIdentity is Options.MaxConnsPerIdentity or its default, the
// per-address cap.
func (g *Gateway) maxConnsPerIdentity() int {
	return cmp.Or(g.opts.MaxConnsPerIdentity, g.maxConnsPerAddr())
}

// screen reads a POST's body (bounded, under the body deadline) and refuses
// what the SDK must not see: a body over the SDK's limit, a batch over
// sdkwire.MaxBatch messages, an id that cannot be answered exactly. The
// body is handed on in memory, as the SDK would have read it.
func (g *Gateway) screen(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := screenBody(r)
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			refuse(w, http.StatusRequestTimeout, fmt.Sprintf("Request Timeout: the body did not arrive within %v, or arrived slower than %d bytes a second after the first %v",
				cmp.Or(g.opts.BodyTimeout, DefaultBodyTimeout), minBodyRate, bodyGrace))
			return
		case errors.Is(err, errBodyTooLarge):
			refuse(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large: a body is at most "+strconv.Itoa(maxBody)+" bytes")
			return
		case err != nil:
			refuse(w, http.StatusBadRequest, "Bad Request: reading the body: "+err.Error())
			return
		}
		ref, valid := sdkwire.Screen(body)
		if ref != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write(errorFrame(ref.ID, ref.Err))
			return
		}
		sb := newScreenedBody(body)
		sb.valid = valid
		r.Body = sb
		if !isBatch(body) {
			next.ServeHTTP(w, r)
			return
		}
		cw := &capWriter{ResponseWriter: w, left: cmp.Or(g.opts.MaxBatchResponse, DefaultMaxBatchResponse), stall: cmp.Or(g.opts.BodyTimeout, DefaultBodyTimeout)}
		next.ServeHTTP(cw, r)
		if !cw.cut {
			// The connection may serve another request, with no deadline.
			http.NewResponseController(w).SetWriteDeadline(time.Time{})
			return
		}
		g.log.Warn("HTTP batch answer cut off: over the limit", "limit_bytes", cmp.Or(g.opts.MaxBatchResponse, DefaultMaxBatchResponse), "session", first(r.Header, "Mcp-Session-Id"))
	})
}

// errBodyTooLarge is screenBody's error for a body over maxBody.
var errBodyTooLarge = errors.New("body over maxBody")

// exactBody is the largest declared body size read into a buffer of that
// size at once; a larger one grows as its bytes arrive, so a client that
// declares megabytes and sends them slowly holds no more than it sent.
const exactBody = 64 << 10

// screenBody reads the body of POST r: a declared size over maxBody is
// refused unread, a small one (most calls) read into one buffer of its
// size, any other read as it comes, up to maxBody.
func screenBody(r *http.Request) ([]byte, error) {
	n := r.ContentLength
	switch {
	case n > maxBody:
		return nil, errBodyTooLarge
	case n >= 0 && n <= exactBody:
		body := make([]byte, n)
		_, err := io.ReadFull(r.Body, body)
		return body, err
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err == nil && len(body) > maxBody {
		err = errBodyTooLarge
	}
	return body, err
}

// screenedBody is a POST's body as screen read it: the take peeks at
// it without reading it (bodyOf), and the SDK reads it.
type screenedBody struct {
	bytes.Reader
	body  []byte
	valid bool // screen found it valid JSON: the transport decodes it without checking again
}

// newScreenedBody returns body as a request's body (one allocation).
func newScreenedBody(body []byte) *screenedBody {
	b := &screenedBody{body: body}
	b.Reset(body)
	return b
}

func (*screenedBody) Close() error { return nil }

// bodyOf returns the body screen read for r, nil when screen did not
// (r is not a POST, or did not pass through Handler).
func bodyOf(r *http.Request) []byte {
	body, _ := screened(r)
	return body
}

// screened is bodyOf, reporting besides whether screen found the body
// valid JSON.
func screened(r *http.Request) (body []byte, valid bool) {
	if b, ok := r.Body.(*screenedBody); ok && b.Len() == len(b.body) {
		return b.body, b.valid
	}
	return nil, false
}

// isBatch reports whether the valid JSON frame is an array.
func isBatch(frame []byte) bool {
	frame = bytes.TrimLeft(frame, " \t\r\n")
	return len(frame) > 0 && frame[0] == '['
}

// DefaultMaxBatchResponse is Options.MaxBatchResponse's default.
const DefaultMaxBatchResponse = 16 << 20

// errBatchTooLarge is what the SDK's writes get once a batch's answer is
// cut off.
var errBatchTooLarge = errors.New("gateway: the batch's answer is over the limit")

// capWriter bounds the answer to one batch: past left bytes, or when a
// write makes no progress for stall (a client that does not read), the
// answer ends and its connection closes, rather than the answers of up to
// MaxBatch requests piling up. The SDK writes a stream's events one at a
// time, so Write is never concurrent with itself.
type capWriter struct {
	http.ResponseWriter
	left  int
	stall time.Duration
	cut   bool
}

func (c *capWriter) Write(p []byte) (int, error) {
	rc := http.NewResponseController(c.ResponseWriter)
	if !c.cut && len(p) > c.left {
		c.cut = true
		// Expired deadlines end the connection: the client sees the
		// answer end, and the request's context ends with it.
		rc.SetWriteDeadline(time.Now())
		rc.SetReadDeadline(time.Now())
	}
	if c.cut {
		return 0, errBatchTooLarge
	}
	c.left -= len(p)
	rc.SetWriteDeadline(time.Now().Add(c.stall))
	return c.ResponseWriter.Write(p)
}

// Flush flushes the answer so far, for handlers that look for
// http.Flusher.
func (c *capWriter) Flush() { http.NewResponseController(c.ResponseWriter).Flush() }

// Unwrap lets http.ResponseController reach the connection (the SDK
// flushes each event through it).
func (c *capWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// errorFrame is a JSON-RPC error response; id is echoed when it is a string
// or a number, else null.
func errorFrame(id json.RawMessage, why *jsonrpc.Error) []byte {
	if len(id) == 0 || (id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9')) {
		id = json.RawMessage("null")
	}
	type wireError struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	return mustJSON(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{"2.0", id, wireError{why.Code, why.Message}})
}
