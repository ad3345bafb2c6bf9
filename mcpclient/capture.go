package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK decodes tools/call results into typed content and rejects the
// whole result when one block has a type it does not know; it also decodes
// tool schemas into maps, losing key order. The bridge must carry results
// and schemas through byte for byte, so it captures the raw JSON of the
// responses it cares about beneath the SDK, keyed by JSON-RPC request id.
//
// A caller puts a *captureSlot into the context of its SDK call; the
// connection (stdio) or HTTP round tripper (Streamable HTTP) notices the
// outgoing request in that context, remembers its id, and fills the slot
// when the response arrives. For tools/call the response the SDK sees is
// replaced by an empty result, so its typed decoding can never fail and
// never costs anything.

// emptyCallResult is what the SDK decodes in place of a captured tools/call
// result.
var emptyCallResult = json.RawMessage(`{"content":[]}`)

// captureSlot receives the raw result of one request.
type captureSlot struct {
	replace     bool // hand the SDK emptyCallResult instead of the real result
	replaceList bool // hand the SDK the tools/list page without its tools

	mu  sync.Mutex
	id  jsonrpc.ID
	raw json.RawMessage
	set bool
	err error // the result was refused (too large)
}

func (s *captureSlot) result() (json.RawMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.raw, s.set
}

func (s *captureSlot) refused() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

type captureKey struct{}

func withCapture(ctx context.Context, slot *captureSlot) context.Context {
	return context.WithValue(ctx, captureKey{}, slot)
}

func captureFrom(ctx context.Context) *captureSlot {
	s, _ := ctx.Value(captureKey{}).(*captureSlot)
	return s
}

// captureTable maps the ids of outstanding captured requests to their slots.
// One table serves one connection (ids are per connection).
type captureTable struct {
	mu      sync.Mutex
	pending map[jsonrpc.ID]*captureSlot
	limit   int64 // largest raw result accepted, in bytes; 0 = unlimited
}

func newCaptureTable(limit int64) *captureTable {
	return &captureTable{pending: make(map[jsonrpc.ID]*captureSlot), limit: limit}
}

// sent records req if its context carries a slot.
func (t *captureTable) sent(ctx context.Context, msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return
	}
	slot := captureFrom(ctx)
	if slot == nil {
		return
	}
	slot.mu.Lock()
	slot.id = req.ID
	slot.mu.Unlock()
	t.mu.Lock()
	t.pending[req.ID] = slot
	t.mu.Unlock()
}

// forget drops slot's entry (after its call returned without a response,
// for example when it was cancelled).
func (t *captureTable) forget(slot *captureSlot) {
	slot.mu.Lock()
	id := slot.id
	slot.mu.Unlock()
	t.mu.Lock()
	if t.pending[id] == slot {
		delete(t.pending, id)
	}
	t.mu.Unlock()
}

// received fills the slot waiting for msg, if any, and reports whether msg
// was changed in place.
func (t *captureTable) received(msg jsonrpc.Message) bool {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || !resp.ID.IsValid() {
		return false
	}
	t.mu.Lock()
	slot := t.pending[resp.ID]
	delete(t.pending, resp.ID)
	t.mu.Unlock()
	if slot == nil || resp.Error != nil {
		return false
	}
	slot.mu.Lock()
	slot.raw, slot.set = resp.Result, true
	slot.mu.Unlock()
	if slot.replaceList {
		// The SDK sees the page without its tools: only the cursor (and the
		// newer protocol's TTL) matter to it.
		var page struct {
			NextCursor json.RawMessage `json:"nextCursor"`
			TTLMs      json.RawMessage `json:"ttlMs"`
		}
		if json.Unmarshal(resp.Result, &page) != nil {
			return false // not an object: let the SDK report it
		}
		empty := []byte(`{"tools":[]`)
		if len(page.NextCursor) > 0 {
			empty = append(append(empty, `,"nextCursor":`...), page.NextCursor...)
		}
		if len(page.TTLMs) > 0 {
			empty = append(append(empty, `,"ttlMs":`...), page.TTLMs...)
		}
		resp.Result = append(empty, '}')
		return true
	}
	if !slot.replace {
		return false
	}
	if t.limit > 0 && int64(len(resp.Result)) > t.limit {
		slot.mu.Lock()
		slot.raw, slot.set = nil, false
		slot.err = fmt.Errorf("the tools/call result of %d bytes exceeds the bridge's limit of %d bytes (MaxResultBytes)", len(resp.Result), t.limit)
		slot.mu.Unlock()
	}
	resp.Result = emptyCallResult
	return true
}

// captureTransport wraps a transport whose connections carry no SDK-private
// state (stdio, in-memory), capturing at the message level.
type captureTransport struct {
	inner mcp.Transport
	table *captureTable
}

func (t *captureTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &captureConn{Connection: conn, table: t.table}, nil
}

type captureConn struct {
	mcp.Connection
	table *captureTable
}

func (c *captureConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	c.table.sent(ctx, msg)
	return c.Connection.Write(ctx, msg)
}

func (c *captureConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.table.received(msg)
	}
	return msg, err
}

// captureRoundTripper captures at the HTTP level for Streamable HTTP: the
// SDK's HTTP connection has private hooks that a wrapping connection would
// hide. It also adds the configured headers to every request, and watches
// the traffic for the signs of a lost connection that the SDK does not
// report (go-sdk.md §2.2, §4).
type captureRoundTripper struct {
	base    http.RoundTripper
	headers http.Header
	table   *captureTable

	// lost is called when the connection is gone although the session
	// does not say so: several transport errors in a row, or the end of
	// the newer protocol's subscriptions/listen stream, which the SDK
	// never re-opens (so list_changed would silently stop).
	lost func(error)
	// reopened is called when the standalone GET stream is opened again:
	// notifications may have been missed meanwhile.
	reopened func()

	// maxMessage bounds one JSON body or SSE event held for capture, so a
	// hostile server cannot make the bridge buffer without end.
	maxMessage int

	failures atomic.Int32 // consecutive transport errors
	gets     atomic.Int32 // standalone GET streams opened
}

// maxTransportFailures is how many transport errors in a row mean the
// connection is lost.
const maxTransportFailures = 3

func (rt *captureRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, vs := range rt.headers {
		req.Header[k] = vs
	}
	if req.Method == http.MethodPost && req.Body != nil && captureFrom(req.Context()) != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("reading request body: %w", err)
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		if msg, err := jsonrpc.DecodeMessage(body); err == nil {
			rt.table.sent(req.Context(), msg)
		}
	}
	resp, err := rt.base.RoundTrip(req)
	if err != nil {
		if rt.failures.Add(1) >= maxTransportFailures && rt.lost != nil && req.Context().Err() == nil {
			rt.lost(fmt.Errorf("%d HTTP requests in a row failed, the last with: %w", maxTransportFailures, err))
		}
		return resp, err
	}
	rt.failures.Store(0)
	// A standalone GET stream opened again (not the first): notifications
	// may have been missed meanwhile.
	if req.Method == http.MethodGet && resp.StatusCode/100 == 2 && rt.gets.Add(1) > 1 && rt.reopened != nil {
		rt.reopened()
	}
	if resp.Body == nil {
		return resp, nil
	}
	if req.Header.Get("Mcp-Method") == "subscriptions/listen" && rt.lost != nil {
		resp.Body = &endWatcher{ReadCloser: resp.Body, ended: func(err error) {
			rt.lost(fmt.Errorf("the subscriptions/listen stream ended (%v); notifications would be lost", err))
		}}
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		resp.Body = newSSEFilter(resp.Body, rt.table, rt.maxMessage)
	case strings.HasPrefix(ct, "application/json") && req.Method == http.MethodPost:
		body, err := io.ReadAll(io.LimitReader(resp.Body, int64(rt.maxMessage)+1))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("reading response body: %w", err)
		}
		if len(body) > rt.maxMessage {
			return nil, fmt.Errorf("the server's JSON response exceeds %d bytes", rt.maxMessage)
		}
		body = rt.filter(body)
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Del("Content-Length")
	}
	return resp, nil
}

// filter applies the capture table to one JSON-RPC message, returning the
// bytes to hand to the SDK.
func (rt *captureRoundTripper) filter(data []byte) []byte {
	return filterMessage(rt.table, data)
}

func filterMessage(t *captureTable, data []byte) []byte {
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil || !t.received(msg) {
		return data
	}
	out, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return data
	}
	return out
}

// sseFilter rewrites captured responses inside a server-sent event stream,
// passing every other byte through unchanged and event by event (streams are
// long-lived; nothing may wait for the end of the body).
type sseFilter struct {
	src   io.ReadCloser
	r     *bufio.Reader
	table *captureTable
	max   int    // largest event held; 0 = no limit
	event []byte // lines of the event being read
	out   []byte // bytes ready for the reader
	err   error
}

func newSSEFilter(body io.ReadCloser, t *captureTable, max int) *sseFilter {
	return &sseFilter{src: body, r: bufio.NewReaderSize(body, 64<<10), table: t, max: max}
}

func (f *sseFilter) Read(p []byte) (int, error) {
	for len(f.out) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, err := f.r.ReadSlice('\n')
		if f.max > 0 && len(f.event)+len(line) > f.max {
			f.err = fmt.Errorf("a server-sent event exceeds %d bytes", f.max)
			f.event = nil
			return 0, f.err
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long data line: keep accumulating it.
			f.event = append(f.event, line...)
			continue
		}
		f.event = append(f.event, line...)
		if err != nil {
			f.err = err
			f.out, f.event = f.event, nil
			break
		}
		if len(bytes.TrimRight(line, "\r\n")) == 0 && endsWithLine(f.event, line) {
			f.out = f.rewrite(f.event)
			f.event = nil
		}
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	return n, nil
}

// endsWithLine reports whether line started at a line boundary of event, that
// is, the blank line terminates an event rather than ending a long line.
func endsWithLine(event, line []byte) bool {
	rest := event[:len(event)-len(line)]
	return len(rest) == 0 || rest[len(rest)-1] == '\n'
}

// rewrite returns event, with its data replaced when it is a captured
// response.
func (f *sseFilter) rewrite(event []byte) []byte {
	var data []byte
	var other [][]byte
	for _, line := range bytes.SplitAfter(event, []byte("\n")) {
		trimmed := bytes.TrimRight(line, "\r\n")
		if v, ok := bytes.CutPrefix(trimmed, []byte("data:")); ok {
			v = bytes.TrimPrefix(v, []byte(" "))
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, v...)
			continue
		}
		if len(trimmed) > 0 {
			other = append(other, line)
		}
	}
	if data == nil {
		return event
	}
	replaced := filterMessage(f.table, data)
	if bytes.Equal(replaced, data) {
		return event
	}
	var b bytes.Buffer
	for _, line := range other {
		b.Write(line)
	}
	b.WriteString("data: ")
	b.Write(replaced)
	b.WriteString("\n\n")
	return b.Bytes()
}

func (f *sseFilter) Close() error { return f.src.Close() }

// endWatcher reports the end of a response body that should stay open, once,
// unless the reader closed it first.
type endWatcher struct {
	io.ReadCloser
	once  sync.Once
	ended func(error)
}

func (w *endWatcher) Read(p []byte) (int, error) {
	n, err := w.ReadCloser.Read(p)
	if err != nil {
		w.once.Do(func() { w.ended(err) })
	}
	return n, err
}

func (w *endWatcher) Close() error {
	w.once.Do(func() {})
	return w.ReadCloser.Close()
}
