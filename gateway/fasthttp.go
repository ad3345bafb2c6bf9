//lint:file-ignore SA1019 MCP 2026-07-28 deprecates logging, sampling and roots (SEP-2577) but keeps them working for at least a year; the fast path must know whether a client offers them.

package gateway

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
)

// The fast path of tools/call over Streamable HTTP (docs/http-fast-path.md).
// The SDK's handler decodes each POST three times over with fresh 32 KiB
// decoders; for the one request a gateway serves most, the gateway answers
// the POST itself, beneath the SDK's handler and behind the same edge
// (connection bounds, authentication, the session's owner, the body
// screen), through the one call path (serveCall), and writes the response
// with the bytes the SDK's handler would write (sdkwire's
// TestContractHTTPCallResponse).
// It takes only what it can answer exactly as the SDK would (fastTakes);
// everything else, and any doubt, stays with the SDK.

// legacyVersions are the protocol versions whose POSTs the fast path
// takes on a session: those a stateful session speaks. A stateless
// gateway takes 2026-07-28 too (sdkwire.PerRequestVersion).
var legacyVersions = map[string]bool{"": true, "2025-11-25": true, "2025-06-18": true, "2025-03-26": true, "2024-11-05": true}

// fastCall is a POST the fast path takes.
type fastCall struct {
	session *mcp.ServerSession // nil in stateless mode: the POST is all there is
	id      jsonrpc.ID
	params  *mcp.CallToolParamsRaw
	version string // the stream's protocol version, as the SDK reads it
	// client is what a 2026-07-28 request's _meta says of its client, nil
	// below.
	client *sdkwire.ClientMeta
}

// fastTakes returns the call a POST carries when the fast path may answer
// it, with body the POST's whole body: a tools/call of a served name in a
// request the SDK would accept as is, of a stateful session opened below
// 2026-07-28 whose client offers no elicitation, or in stateless mode a
// POST without a session id, below 2026-07-28 (the session the SDK makes
// for it gives the call no client facts: sdkwire's
// TestContractOneRequestStateless) or of 2026-07-28 from a client that
// offers nothing (its facts are in the request's _meta:
// TestContractPerRequestStateless).
func (g *Gateway) fastTakes(r *http.Request, body []byte) (fastCall, bool) {
	if !fastHeaders(r.Header, !g.stateless(r)) || body == nil {
		return fastCall{}, false
	}
	req, ok := sdkwire.PeekCall(body)
	if !ok {
		return fastCall{}, false
	}
	p, client, ok := g.readFastParams(r.Header, req.Params)
	if !ok {
		return fastCall{}, false
	}
	if _, ok := (*g.callable.Load())[p.Name]; !ok {
		return fastCall{}, false
	}
	var ss *mcp.ServerSession
	if !g.stateless(r) {
		ss = g.openSession(r.Header.Get("Mcp-Session-Id"))
		if ss == nil || !sdkwire.TakesCalls(ss) || !elicitsNothing(ss) {
			return fastCall{}, false
		}
	}
	version := r.Header.Get("Mcp-Protocol-Version")
	if version == "" {
		version = "2025-03-26" // the SDK's default for a stream
	}
	return fastCall{session: ss, id: req.ID, params: &mcp.CallToolParamsRaw{Meta: p.Meta, Name: p.Name, Arguments: p.Arguments}, version: version, client: client}, true
}

// readFastParams reads the params of a tools/call POST with header h, and
// for 2026-07-28 what its _meta says of the client, which must match the
// headers the SDK checks against it (the version, Mcp-Name), of a tool
// whose arguments the SDK checks against no Mcp-Param-* header.
func (g *Gateway) readFastParams(h http.Header, params json.RawMessage) (sdkwire.CallParams, *sdkwire.ClientMeta, bool) {
	if h.Get("Mcp-Protocol-Version") != sdkwire.PerRequestVersion {
		p, ok := sdkwire.ReadCallParams(params)
		return p, nil, ok
	}
	p, client, ok := sdkwire.ReadPerRequestCall(params)
	if !ok || client.Version != sdkwire.PerRequestVersion || p.Name != h.Get("Mcp-Name") || (*g.headerTools.Load())[p.Name] {
		return p, nil, false
	}
	return p, &client, true
}

// openSession returns the open session called id that the gateway has
// seen, or nil: without the SDK's sessions, whose listing copies them all.
func (g *Gateway) openSession(id string) *mcp.ServerSession {
	g.mu.Lock()
	st := g.byID[id]
	g.mu.Unlock()
	if st == nil {
		return nil
	}
	select {
	case <-st.ended:
		return nil
	default:
		return st.ss
	}
}

// fastHeaders reports whether a POST's headers are ones the SDK's handler
// accepts without a word: a session id when session (a stateful
// session's request), else none (stateless: the SDK then reads none
// whatever its compatibility settings, see sdkwire's
// TestContractOneRequestStateless), a legacy
// protocol version (or none) or, stateless, 2026-07-28 with the
// Mcp-Method (tools/call) and Mcp-Name headers it requires, a JSON body,
// an Accept of both JSON and SSE, no Last-Event-ID, no Mcp-Param-*
// header, and below 2026-07-28 no Mcp-Method or Mcp-Name (which the SDK
// checks against the body).
func fastHeaders(h http.Header, session bool) bool {
	if (h.Get("Mcp-Session-Id") != "") != session || len(h.Values("Mcp-Session-Id")) > 1 || len(h.Values("Last-Event-Id")) > 0 {
		return false
	}
	perRequest := !session && h.Get("Mcp-Protocol-Version") == sdkwire.PerRequestVersion
	if !legacyVersions[h.Get("Mcp-Protocol-Version")] && !perRequest {
		return false
	}
	if ct := h.Values("Content-Type"); len(ct) != 1 || mediaType(ct[0]) != "application/json" {
		return false
	}
	for key, values := range h {
		switch {
		case key == "Mcp-Method" || key == "Mcp-Name":
			if !perRequest || len(values) != 1 {
				return false
			}
		case strings.HasPrefix(key, "Mcp-Param-"):
			return false
		}
	}
	if perRequest && (h.Get("Mcp-Method") != "tools/call" || h.Get("Mcp-Name") == "") {
		return false
	}
	return acceptsBoth(h.Values("Accept"))
}

// acceptsBoth reports whether Accept values name application/json and
// text/event-stream.
func acceptsBoth(values []string) bool {
	json, sse := accepts(values)
	return json && sse
}

// acceptsSSE reports whether Accept values name text/event-stream.
func acceptsSSE(values []string) bool {
	_, sse := accepts(values)
	return sse
}

// accepts reports which of application/json and text/event-stream Accept
// values name.
func accepts(values []string) (json, sse bool) {
	for _, v := range values {
		for token := range strings.SplitSeq(v, ",") {
			switch mediaType(token) {
			case "application/json":
				json = true
			case "text/event-stream":
				sse = true
			}
		}
	}
	return json, sse
}

// mediaType is a media type without parameters, in lower case.
func mediaType(v string) string {
	v, _, _ = strings.Cut(v, ";")
	return strings.ToLower(strings.TrimSpace(v))
}

// elicitsNothing reports whether the client of ss offers no elicitation:
// the SDK checks the answer to one against its schema, which the fast path
// leaves to the SDK.
func elicitsNothing(ss *mcp.ServerSession) bool {
	caps := clientCapabilities(ss)
	return caps == nil || caps.Elicitation == nil
}

// logLevel is the level the client of ss set, "" before it sets one.
func (g *Gateway) logLevel(ss *mcp.ServerSession) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	if st := g.stateLocked(ss); st != nil {
		return st.logLevel
	}
	return ""
}

// noteLogLevel records the level a logging/setLevel request the SDK
// served set for its session, as the session keeps it.
func (g *Gateway) noteLogLevel(ctx context.Context, ss *mcp.ServerSession, req mcp.Request) {
	p, ok := req.GetParams().(*mcp.SetLoggingLevelParams)
	if ss == nil || !ok || p == nil || g.statelessIn(ctx) { // a stateless session ends with its request
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if st := g.stateLocked(ss); st != nil {
		st.logLevel = string(p.Level)
	}
}

// fastStreams are the response streams of the fast path's calls still
// running, by stream id (for a client that resumes one) and by session and
// request id (the SDK refuses a request id in flight on the session, and a
// client cancels a call by its id).
type fastStreams struct {
	mu    sync.Mutex
	byID  map[string]*fastStream                // guarded by mu
	calls map[string]map[jsonrpc.ID]*fastStream // by session id; guarded by mu
	// sdk counts the requests the SDK's handler serves, by session id
	// and request id (enterSDK); guarded by mu.
	sdk map[string]map[jsonrpc.ID]int
}

// open registers s, the stream of the call id, or reports that the id is
// in flight on the session already, on either path.
func (f *fastStreams) open(s *fastStream, id jsonrpc.ID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls[s.session][id] != nil || f.sdk[s.session][id] > 0 {
		return false
	}
	if f.byID == nil {
		f.byID, f.calls = make(map[string]*fastStream), make(map[string]map[jsonrpc.ID]*fastStream)
	}
	if f.calls[s.session] == nil {
		f.calls[s.session] = make(map[jsonrpc.ID]*fastStream)
	}
	f.calls[s.session][id] = s
	f.byID[s.id] = s
	return true
}

// close forgets a stream whose response was written: a client resuming it
// now gets it replayed by the SDK, from the event store, as the SDK's own
// finished streams.
func (f *fastStreams) close(s *fastStream, id jsonrpc.ID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.byID, s.id)
	delete(f.calls[s.session], id)
	if len(f.calls[s.session]) == 0 {
		delete(f.calls, s.session)
	}
}

// enterSDK notes ids, the requests of a POST of session that the SDK's
// handler is to serve, until leaveSDK; or, when one of them is in flight
// on the fast path, notes nothing and returns it: the SDK would refuse
// the POST for it, had it the call in its own table.
func (f *fastStreams) enterSDK(session string, ids []jsonrpc.ID) (jsonrpc.ID, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range ids {
		if f.calls[session][id] != nil {
			return id, false
		}
	}
	if f.sdk == nil {
		f.sdk = make(map[string]map[jsonrpc.ID]int)
	}
	if f.sdk[session] == nil {
		f.sdk[session] = make(map[jsonrpc.ID]int)
	}
	for _, id := range ids {
		f.sdk[session][id]++
	}
	return jsonrpc.ID{}, true
}

// leaveSDK forgets ids, noted by enterSDK, once the SDK's handler served
// their POST.
func (f *fastStreams) leaveSDK(session string, ids []jsonrpc.ID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range ids {
		if f.sdk[session][id]--; f.sdk[session][id] <= 0 {
			delete(f.sdk[session], id)
		}
	}
	if len(f.sdk[session]) == 0 {
		delete(f.sdk, session)
	}
}

// refuseDuplicate answers a POST carrying id, a request id in flight on
// its session, as the SDK's handler does (sdkwire's
// TestContractDuplicateIDRefused).
func refuseDuplicate(w http.ResponseWriter, id jsonrpc.ID) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	data, _ := sdkwire.ResponseJSON(id, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "duplicate in-flight request ID " + idText(id)})
	w.Write(data)
}

// get returns the running stream id of session, or nil.
func (f *fastStreams) get(session, id string) *fastStream {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s := f.byID[id]; s != nil && s.session == session {
		return s
	}
	return nil
}

// cancel cancels the running call id of session, if any.
func (f *fastStreams) cancel(session string, id jsonrpc.ID) {
	f.mu.Lock()
	s := f.calls[session][id]
	f.mu.Unlock()
	if s != nil && s.cancel != nil {
		s.cancel(sdkwire.ErrCancelled)
	}
}

// newStreamID is a stream id as the SDK makes them: random, unique within
// the session.
func newStreamID() string { return rand.Text() }

// serveFast answers call on w, and returns once the call has ended. The
// call runs on the request's own goroutine (no hand-off): a stateful
// session's client that leaves mid-call may resume the stream (see
// serveMCP), so the call goes on, its events kept, until it ends or the
// resume grace cancels it; a stateless client's call is cancelled at
// once, as on the SDK's path.
func (g *Gateway) serveFast(w http.ResponseWriter, r *http.Request, call fastCall) {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(r.Context()))
	defer cancel(nil)
	s := &fastStream{id: newStreamID(), version: call.version, w: w, done: make(chan struct{}), cancel: cancel}
	if call.session == nil {
		g.serveOneRequest(ctx, w, r, s, call)
		return
	}
	s.session, s.store, s.asks = call.session.ID(), g.events, &g.fastAsks
	s.level = func() string { return g.logLevel(call.session) }
	if !g.fast.open(s, call.id) {
		refuseDuplicate(w, call.id)
		return
	}
	defer g.fast.close(s, call.id)
	g.keepAlive.during(call.session, func() { g.answerFast(ctx, w, r, s, call) })
}

// serveOneRequest answers a stateless POST's call on s, as the SDK
// answers it on the session it makes for that POST alone (sdkwire's
// TestContractOneRequestStateless): no session id, no event store (no
// priming, no event ids, nothing to resume), log messages from "info" up, no question put to the client
// (the SDK refuses a stateless session's requests), no id shared with
// another POST. While it runs it counts as a session, as the SDK's does.
func (g *Gateway) serveOneRequest(ctx context.Context, w http.ResponseWriter, r *http.Request, s *fastStream, call fastCall) {
	s.level = oneRequestLevel
	if call.client != nil {
		level := call.client.LogLevel
		s.level = func() string { return level }
	}
	g.oneRequests.Add(1)
	defer g.oneRequests.Add(-1)
	g.answerFast(ctx, w, r, s, call)
}

// oneRequestLevel is the log level of a stateless POST's session.
func oneRequestLevel() string { return sdkwire.OneRequestLogLevel }

// answerFast runs call through the one call path and writes its response
// on s, whose first writer is w.
func (g *Gateway) answerFast(ctx context.Context, w http.ResponseWriter, r *http.Request, s *fastStream, call fastCall) {
	s.prime(r.Context())
	left := context.AfterFunc(r.Context(), func() { s.detach(w) })
	defer left()
	req := callRequest{session: call.session, header: r.Header, params: call.params, out: s, oneRequest: call.session == nil}
	status, wire := 0, sdkwire.CallResultJSON
	if call.client != nil {
		req.client = call.client.Client
		wire = func(isError bool, content, structured json.RawMessage) json.RawMessage {
			return sdkwire.CallResultJSONPerRequest(isError, content, structured, g.serverInfo)
		}
	}
	res, err := g.serveCall(ctx, req)
	if call.client != nil {
		status = sdkwire.ErrorStatus(err)
	}
	data, encErr := sdkwire.ResponseJSON(call.id, wire(res.isError, res.content, res.structured), err)
	if encErr != nil {
		data, _ = sdkwire.ResponseJSON(call.id, nil, encErr) // unreachable: the result is valid JSON
	}
	s.finish(ctx, data, status)
	s.detach(w)
}

// hang waits while a request holds s: until its response went out, the
// client left or the session ended (the SDK ends its streams then).
func (g *Gateway) hang(ctx context.Context, s *fastStream, ss *mcp.ServerSession) {
	select {
	case <-s.done:
	case <-ctx.Done():
	case <-g.ends.of(ss):
	}
}

// resumeFast serves a GET that resumes (Last-Event-ID) the stream of a
// fast-path call still running: the events after the client's last, then
// the rest as they come. It reports false for anything else, which the
// SDK serves (a finished stream is replayed from the event store).
func (g *Gateway) resumeFast(w http.ResponseWriter, r *http.Request) bool {
	stream, last, ok := parseEventID(r.Header.Get("Last-Event-ID"))
	if !ok || len(r.Header.Values("Last-Event-ID")) != 1 || !acceptsSSE(r.Header.Values("Accept")) {
		return false
	}
	session := r.Header.Get("Mcp-Session-Id")
	s := g.fast.get(session, stream)
	ss := g.openSession(session)
	if s == nil || ss == nil {
		return false
	}
	if s.resume(r.Context(), w, last) {
		g.hang(r.Context(), s, ss)
		s.detach(w)
	}
	return true
}

// parseEventID reads a Last-Event-ID in the SDK's format (sdkwire.EventID).
func parseEventID(id string) (stream string, idx int, ok bool) {
	stream, n, found := strings.Cut(id, "_")
	if !found || strings.Contains(n, "_") {
		return "", 0, false
	}
	idx, err := strconv.Atoi(n)
	return stream, idx, err == nil && idx >= 0
}

// idText is a request id as the SDK prints it in its errors.
func idText(id jsonrpc.ID) string { return fmt.Sprint(id.Raw()) }
