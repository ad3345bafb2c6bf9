package sdkwire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpbridge/mcpbridge/internal/projection"
)

// Raw-result capture (assumptions 1–3 and 6 of the package doc).
//
// A caller puts a *Slot into the context of its SDK call; the connection
// (CaptureTransport) or the HTTP round tripper (CaptureRoundTripper) sees
// the outgoing request in that context, records its id in a Table, and fills
// the slot when the response arrives. What the SDK then decodes depends on
// the slot's Mode.

// Mode says what the SDK is handed in place of a captured result.
type Mode uint8

const (
	// PassResult hands the SDK the result as it came.
	PassResult Mode = iota
	// CapturedCall hands the SDK an error response in place of a
	// tools/call result, which CallTool returns as an error Captured
	// recognizes, decoding nothing (assumption 3): neither the SDK's typed
	// decoding, which rejects a whole result for one unknown content block,
	// nor its 32 KiB-buffer decoders ever run. A result over the Table's
	// limit is refused (Slot.Refused).
	CapturedCall
	// HeaderToolsPage hands the SDK the tools/list page with only the tools
	// that may carry x-mcp-header annotations (HeaderCandidate), every other
	// member of the page as sent: the SDK then drops the invalid ones and
	// caches the valid ones, and CallTool mirrors their annotated arguments
	// as Mcp-Param-* headers, while the bulk of a large catalog is never
	// decoded into typed schemas.
	HeaderToolsPage
)

// InputRequired reports whether result is an input-required result of a
// multi round-trip request (SEP-2322): "resultType":"input_required" at
// its top level, the name as the SDK's decoder matches it (exactly once
// unescaped, not in another case; the last of a repeated one). A value
// written with escapes is not looked for: no encoder escapes ASCII.
func InputRequired(result json.RawMessage) bool {
	if !bytes.Contains(result, []byte(`"input_required"`)) {
		return false // the common case, without decoding
	}
	if len(result) == 0 || result[0] != '{' || !json.Valid(result) {
		return false
	}
	resultType := ""
	for key, val := range projection.Members(result) {
		if val[0] == '"' && projection.KeyIs(key, "resultType") {
			resultType = projection.DecodeString(val)
		}
	}
	return resultType == "input_required"
}

// capturedError is the error response the SDK is handed in place of a
// captured tools/call result (assumption 3). Its code is outside the range
// JSON-RPC reserves; only a response the Table answered this way has it
// with a filled slot.
var capturedError = &jsonrpc.Error{Code: 1_000_003, Message: "mcpbridge: result captured beneath the SDK"}

// Captured reports whether err, from an SDK call made with a CapturedCall
// slot, is the response the Table handed the SDK for its captured result
// (the slot then holds the result, or says why it refused it).
func Captured(err error) bool {
	wire, ok := errors.AsType[*jsonrpc.Error](err)
	return ok && wire.Code == capturedError.Code && wire.Message == capturedError.Message
}

// Slot receives the raw result of one request. Its methods are safe for
// concurrent use.
type Slot struct {
	mode    Mode
	rewrite *Rewrite // set by NewRewriteSlot; read-only after

	mu  sync.Mutex
	id  jsonrpc.ID
	raw json.RawMessage
	set bool
	err error // the result was refused (too large)
}

// NewSlot returns an empty slot whose result the SDK sees as mode says.
func NewSlot(mode Mode) *Slot { return &Slot{mode: mode} }

// Result returns the raw result, and whether one arrived. A response
// answered from the SDK's own cache (newer protocol, ttlMs) never reaches
// the wire, so it leaves the slot empty.
func (s *Slot) Result() (json.RawMessage, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.raw, s.set
}

// Refused returns why the result was refused, or nil.
func (s *Slot) Refused() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

type slotKey struct{}

// WithSlot returns ctx carrying slot, for the SDK call whose raw result
// slot should receive.
func WithSlot(ctx context.Context, slot *Slot) context.Context {
	return context.WithValue(ctx, slotKey{}, slot)
}

// SlotFrom returns the slot ctx carries, or nil.
func SlotFrom(ctx context.Context) *Slot {
	s, _ := ctx.Value(slotKey{}).(*Slot)
	return s
}

// Table maps the ids of outstanding captured requests to their slots. One
// table serves one connection (ids are per connection). Its methods are
// safe for concurrent use.
type Table struct {
	mu      sync.Mutex
	pending map[jsonrpc.ID]*Slot
	limit   int64 // largest tools/call result accepted, in bytes; 0 = unlimited
	notify  func(method string, params json.RawMessage)
	request func(method string, params json.RawMessage)
	consume map[string]bool // notifications OnNotification takes for itself
	related func(method string, params json.RawMessage, call *Slot)

	// notifications/cancelled the bridge expects the SDK to send (it sends
	// them on goroutines of its own) and those written so far.
	cancelsExpected, cancelsWritten int
	cancelsFlushed                  chan struct{} // closed when written catches up
}

// ExpectCancel notes that the SDK is to send one notifications/cancelled
// (a call of the bridge's ended by its context): FlushCancels waits for it.
func (t *Table) ExpectCancel() {
	t.mu.Lock()
	t.cancelsExpected++
	t.mu.Unlock()
}

// Written notes a message the connection has written (or failed to).
func (t *Table) Written(msg jsonrpc.Message) {
	if req, ok := msg.(*jsonrpc.Request); !ok || req.IsCall() || req.Method != "notifications/cancelled" {
		return
	}
	t.mu.Lock()
	t.cancelsWritten++
	if t.cancelsWritten >= t.cancelsExpected && t.cancelsFlushed != nil {
		close(t.cancelsFlushed)
		t.cancelsFlushed = nil
	}
	t.mu.Unlock()
}

// FlushCancels waits, at most d, until every notifications/cancelled noted
// by ExpectCancel has been written, and reports whether they were.
func (t *Table) FlushCancels(d time.Duration) bool {
	t.mu.Lock()
	if t.cancelsWritten >= t.cancelsExpected {
		t.mu.Unlock()
		return true
	}
	if t.cancelsFlushed == nil {
		t.cancelsFlushed = make(chan struct{})
	}
	ch := t.cancelsFlushed
	t.mu.Unlock()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ch:
		return true
	case <-timer.C:
		return false
	}
}

// OnNotification makes the table hand every notification it sees to fn,
// synchronously and in the order the connection reads them: a progress
// notification is delivered before the response that follows it is even
// read, where the SDK's own handlers may run after the call has returned.
// fn must not block. Call it before the connection is used.
func (t *Table) OnNotification(fn func(method string, params json.RawMessage)) {
	t.notify = fn
}

// Consume makes the notifications of methods OnNotification's alone: the
// connection never hands them to the SDK, which queues what it reads
// without bound for handlers that run one at a time, so a peer flooding
// notifications the SDK has no handler for grew that queue by hundreds of
// MiB. Call it, with OnNotification, before the connection is used.
func (t *Table) Consume(methods ...string) {
	t.consume = make(map[string]bool, len(methods))
	for _, m := range methods {
		t.consume[m] = true
	}
}

// consumed reports whether msg is a notification Consume keeps from the
// SDK, once Received has handed it over.
func (t *Table) consumed(msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	return ok && !req.IsCall() && t.notify != nil && t.consume[req.Method]
}

// OnRelatedRequest makes the table hand fn every request of the peer that
// arrives on the response stream of a call made with a Slot, with its
// params as written and that call's slot: over Streamable HTTP a server
// sends the requests a call causes on that call's stream, which ties them
// to it. fn runs before the SDK decodes the request and must not block.
// Call it before the connection is used.
func (t *Table) OnRelatedRequest(fn func(method string, params json.RawMessage, call *Slot)) {
	t.related = fn
}

// relate hands msg to OnRelatedRequest's fn when it is a request of the
// peer that arrived on call's stream.
func (t *Table) relate(msg jsonrpc.Message, call *Slot) {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && call != nil && t.related != nil {
		t.related(req.Method, req.Params, call)
	}
}

// OnRequest makes the table hand every request of the peer (a call that
// wants an answer, such as elicitation/create) to fn with its params as
// the peer wrote them, synchronously, before the SDK decodes and handles
// it. fn must not block. Call it before the connection is used.
func (t *Table) OnRequest(fn func(method string, params json.RawMessage)) {
	t.request = fn
}

// NewTable returns an empty table. limit bounds a result captured with
// CapturedCall, in bytes; 0 means no bound.
func NewTable(limit int64) *Table {
	return &Table{pending: make(map[jsonrpc.ID]*Slot), limit: max(limit, 0)}
}

// Sent records msg if it is a call whose ctx carries a slot.
func (t *Table) Sent(ctx context.Context, msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return
	}
	slot := SlotFrom(ctx)
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

// Forget drops slot's entry, for a call that returned without a response
// (cancelled, or answered from the SDK's cache). Call it after every
// captured call.
func (t *Table) Forget(slot *Slot) {
	slot.mu.Lock()
	id := slot.id
	slot.mu.Unlock()
	t.mu.Lock()
	if t.pending[id] == slot {
		delete(t.pending, id)
	}
	t.mu.Unlock()
}

// Received fills the slot waiting for msg, if any, and reports whether it
// changed msg in place (the SDK must then see the changed message).
func (t *Table) Received(msg jsonrpc.Message) bool {
	if req, ok := msg.(*jsonrpc.Request); ok {
		fn := t.notify
		if req.IsCall() {
			fn = t.request
		}
		if fn != nil {
			fn(req.Method, req.Params)
		}
		return false
	}
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
	if InputRequired(resp.Result) {
		// One round of a multi round-trip call (protocol 2026-07-28): the
		// SDK's middleware answers its input requests and sends the call
		// again, whose answer fills the slot (assumption 20).
		return false
	}
	slot.mu.Lock()
	defer slot.mu.Unlock()
	slot.raw, slot.set = resp.Result, true
	switch slot.mode {
	case CapturedCall:
		if t.limit > 0 && int64(len(resp.Result)) > t.limit {
			slot.raw, slot.set = nil, false
			slot.err = fmt.Errorf("the tools/call result of %d bytes exceeds the bridge's limit of %d bytes (MaxResultBytes)", len(resp.Result), t.limit)
		}
		resp.Result, resp.Error = nil, capturedError
		return true
	case HeaderToolsPage:
		page, changed := headerToolsPage(resp.Result)
		resp.Result = page
		return changed
	default:
		uncached, changed := uncachedPrivate(resp.Result)
		if changed {
			resp.Result = uncached
		}
		return changed
	}
}
