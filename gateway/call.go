package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/projection"
	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/internal/serverwire"
	"github.com/mcpbridge/mcpbridge/tool"
)

// result is a tools/call result in wire form.
type result struct {
	isError bool
	// content is a JSON array of blocks that every go-sdk client decodes.
	content json.RawMessage
	// structured is the structuredContent value, nil when absent.
	structured json.RawMessage
	// questions, when set, makes it an input-required result: the
	// inputRequests object, and state the requestState (see runParkable).
	questions json.RawMessage
	state     string
	// wire is a parked prompts/get's or resources/read's result as the
	// backend sent it (parkedOffer); a tools/call's has none.
	wire json.RawMessage
}

// callRequest is one tools/call, whichever path read it.
type callRequest struct {
	session *mcp.ServerSession // nil when called without one (tests, a stateless extension task)
	header  http.Header        // the HTTP request's headers; nil off HTTP
	params  *mcp.CallToolParamsRaw
	// peer, for a 2026-07-28 call taken beneath its stateless POST's
	// session (takePerRequest), is its client as that session serves it;
	// nil on the other paths.
	peer *perRequestPeer
	// oneRequest: the call has no session but its POST, as a stateless
	// POST's on the SDK's path has one made for it alone (the HTTP fast
	// path in stateless mode): no call slots of a session, a view of its
	// own, nothing kept.
	oneRequest bool
	// client is the name a oneRequest call's client gives in its request
	// (2026-07-28 _meta), "" when it gives none.
	client string
	// caller keys the call slots of a stateless extension task, which has
	// neither a session nor a POST of its own (see share).
	caller string
	// holder is whose share of the gateway's calls it takes (holderOf),
	// set as it is admitted.
	holder holder
	// madeOn is the request stream of the request that made a task's
	// call: its header keeps none (taskCallRequest), as the task outlives
	// that request, but the task's admission still waits on it
	// (awaitReadyOn).
	madeOn string
	// inner, for a call a served tool makes for its caller (CallFor), is
	// the call of that tool; nil for a client's call.
	inner *admission
	// cancel, when set, cancels the context the call arrived with, which
	// is the call's alone (a taken call's: sdkwire.CallCancel): run
	// cancels the call with it rather than with a context of its own.
	cancel context.CancelCauseFunc
}

// serveCall is the gateway's one path for a tools/call, whichever way it
// arrived (the SDK's middleware, the take on stdio and HTTP;
// a task's call, on stdio, stateful HTTP or the stateless extension, and a
// served tool's inner call (CallFor) enter at admit): admitted once
// (admit: its slot, readiness, the caller's view, the Gate), then run and
// ended with its outcome (admission.serve). A call again with a
// requestState brings answers to a call admitted in an earlier round
// (serveRetry), which does not enter the Gate again. The error is non-nil
// only for a protocol error (a name the caller is not served, the cap
// reached, ctx ended while waiting for readiness).
func (g *Gateway) serveCall(ctx context.Context, req callRequest) (result, error) {
	if req.params.RequestState != "" {
		return g.serveRetry(ctx, req)
	}
	a, res, err := g.admit(ctx, req)
	if a == nil {
		return res, err
	}
	return a.serve()
}

// unknownTool is the SDK's error for a tool the server does not list, as
// the MCP spec has it.
func unknownTool(name string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
}

// refused answers a call the Gate refused with err.
func refused(err error) (result, error) {
	if wire, ok := errors.AsType[*jsonrpc.Error](err); ok {
		return result{}, wire
	}
	return errorResult("tool call refused: " + err.Error()), nil
}

// sessionID is ss's ID, "" without a session.
func sessionID(ss *mcp.ServerSession) string {
	if ss == nil {
		return ""
	}
	return ss.ID()
}

// sdkCall serves a tools/call the SDK's session read (see middleware).
func (g *Gateway) sdkCall(ctx context.Context, req mcp.Request) (mcp.Result, error) {
	call, _ := req.(*mcp.CallToolRequest)
	params := call.Params
	if params == nil {
		params = &mcp.CallToolParamsRaw{}
	}
	var header http.Header
	if call.Extra != nil {
		header = call.Extra.Header
	}
	res, err := g.serveCall(ctx, callRequest{session: call.Session, header: header, params: params})
	if err != nil {
		return nil, err
	}
	if res.questions != nil {
		return sdkwire.InputRequiredResult(res.questions, res.state), nil
	}
	return sdkwire.RawResult(call.Session, res.isError, res.content, res.structured), nil
}

// handleCall is the handler every listed tool has on the SDK's server.
// The middleware answers tools/call before the SDK's dispatch reaches it,
// so it runs only when called directly (without a middleware): it then
// returns the blocks typed, which the sanitized content always allows.
func (g *Gateway) handleCall(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	res, err := g.serveCall(ctx, callRequest{session: req.Session, params: req.Params})
	if err != nil {
		return nil, err
	}
	if res.questions != nil {
		return nil, fmt.Errorf("gateway: tool %q asks its client, which only the gateway's middleware can put to it", req.Params.Name) // untested: every served session has the middleware
	}
	var typed mcp.CallToolResult
	if err := json.Unmarshal(append(append([]byte(`{"content":`), res.content...), '}'), &typed); err != nil {
		return nil, fmt.Errorf("gateway: decoding the content of tool %q: %w", req.Params.Name, err)
	}
	out := &mcp.CallToolResult{IsError: res.isError, Content: typed.Content}
	if res.structured != nil {
		out.StructuredContent = res.structured
	}
	return out, nil
}

// callHow is how run serves a call.
type callHow struct {
	// stream is the HTTP request stream the call arrived on, "" off HTTP.
	stream string
	// ask answers the backend's requests; nil asks the client in the
	// middle of the call (asker).
	ask tool.AskFunc
	// parked: the call may outlive its request (runParkable), so only
	// Close cancels it, not the end of its session or stream.
	parked bool
	// peer is the call's perRequestPeer, which carries its
	// notifications and says what its client offers; nil on the other
	// paths.
	peer *perRequestPeer
	// notes, when set, takes the call's progress and log messages instead
	// of the session or out: a parked call's relay, which sends them to
	// the request waiting on the call now, under that request's progress
	// token (so progress is asked of the backend whatever the first
	// request's token).
	notes notifier
	// keep, when set, receives the registry's Result of the call (an
	// inner call's: CallFor).
	keep *tool.Result
	// cancel, when set, is callRequest.cancel: it cancels the context
	// run is given (a Gate keeps its cancellation).
	cancel context.CancelCauseFunc
}

// callRun is what run keeps of one call, made in one allocation on every
// call's path: its entry among the calls in flight, the forwarder of its
// notifications and the context relating it to its client (relate).
type callRun struct {
	flight  inflight
	fwd     forwarder
	related tool.ConsumerContext
}

// run executes the registry tool name for a call that holds its slot,
// through Registry.Execute.
func (g *Gateway) run(ctx context.Context, name string, session *mcp.ServerSession, how callHow, params *mcp.CallToolParamsRaw) (result, error) {
	cancel := how.cancel
	if cancel == nil {
		ctx, cancel = context.WithCancelCause(ctx)
	}
	defer cancel(nil)
	r := &callRun{flight: inflight{session: session, cancel: cancel, stream: how.stream}}
	c := &r.flight
	if how.parked {
		c.session = nil
	}
	if err := g.track(c); err != nil { // untested: a call arriving while its session or the gateway closes
		return errorResult("tool call refused: " + err.Error()), nil
	}
	defer g.untrack(c)
	if g.streamGone(c.stream) {
		cancel(errStreamGone) // queued while its client left
	}

	if session != nil {
		ctx = g.relate(ctx, r, name, session, how, params)
		defer r.fwd.stop()
	}
	if g.opts.CallContext != nil {
		ctx = g.opts.CallContext(ctx, params.Meta)
	}
	if caller := perRequestCaller(params.Meta); caller != nil {
		ctx = tool.WithCaller(ctx, caller)
	}
	var ended func(tool.Result, bool)
	if g.opts.Observer != nil {
		ended = g.opts.Observer.CallStarted(name)
	}
	res, err := g.reg.Execute(ctx, name, params.Arguments)
	if ended != nil {
		ended(res, ctx.Err() != nil)
	}
	if how.keep != nil {
		*how.keep = res
	}
	if err != nil {
		// Listed a moment ago, unregistered since (the next sync removes it).
		return result{}, unknownTool(name)
	}
	if wire := backendError(res); wire != nil {
		return result{}, wire
	}
	return g.toWire(ctx, name, res), nil
}

// perRequestCaller is the description a 2026-07-28 request's _meta gives
// of its client (clientInfo, clientCapabilities), for the backend to judge
// the caller by (tool.WithCaller); nil for a request without one.
func perRequestCaller(meta map[string]any) map[string]any {
	caps, ok := meta[mcp.MetaKeyClientCapabilities]
	if !ok {
		return nil
	}
	caller := map[string]any{mcp.MetaKeyClientCapabilities: caps}
	if info, ok := meta[mcp.MetaKeyClientInfo]; ok {
		caller[mcp.MetaKeyClientInfo] = info
	}
	return caller
}

// backendError is the JSON-RPC error a backend answered the call with, to
// be the client's answer as sent (a -32021 asks the client for a
// capability; an isError result would hide it), or nil. The SDK's own
// "rejected by transport" (sdkwire.ErrRejected) is a local failure, not
// an answer.
func backendError(res tool.Result) *jsonrpc.Error {
	wire, ok := errors.AsType[*jsonrpc.Error](res.Cause)
	if !ok || errors.Is(wire, sdkwire.ErrRejected) {
		return nil
	}
	return wire
}

// relate ties a call's context to its client: its progress and log
// messages go to the session (a taken 2026-07-28 call's: through its
// perRequestPeer), the backend's questions to the client as asker
// decides, and the call belongs to the
// session. The consumer forwards the result of the registry tool name
// as its source sent it (toWire serves Wire when there is one), unless
// it is kept for an inner call's caller, which reads its Content and
// Value. It makes r's forwarder and context; r.fwd.stop ends the
// forwarding once the call returned.
func (g *Gateway) relate(ctx context.Context, r *callRun, name string, session *mcp.ServerSession, how callHow, params *mcp.CallToolParamsRaw) context.Context {
	var out notifier = session
	if how.peer != nil {
		out = how.peer
	}
	belongs := clientSession{g, session}
	if how.notes != nil {
		out = how.notes
	}
	r.fwd = forwarding(ctx, out, g.log)
	c := tool.Consumer{Log: r.fwd.logged, Ask: how.ask, Session: belongs}
	if how.keep == nil {
		c.Forwards = name
	}
	if tok := params.GetProgressToken(); tok != nil || how.notes != nil {
		c.Progress = r.fwd.progress(tok)
	}
	if c.Ask == nil {
		c.Ask = g.asker(session, how.peer)
	}
	c.Ask = markAsks(ctx, c.Ask)
	return r.related.Bind(ctx, c)
}

// toWire maps a registry Result to the tools/call result served: the
// source's own wire result when it has one (an MCP backend's, isError
// kept), else the tool's text content, plus its value as structuredContent
// when that is a JSON object.
func (g *Gateway) toWire(ctx context.Context, name string, res tool.Result) result {
	if cause := context.Cause(ctx); errors.Is(cause, errClosing) || errors.Is(cause, errSessionClosed) {
		// The gateway cancelled the call: say why, whatever the tool said.
		return errorResult("tool call cancelled: " + cause.Error())
	}
	if res.Wire != nil {
		if out, err := fromRaw(res.Wire, name); err == nil {
			out.isError = out.isError || res.IsError
			return out
		}
	}
	if res.IsError {
		return errorResult(res.Error.Message)
	}
	content := res.Content
	if content == nil {
		content = []tool.Content{}
	}
	out := result{content: sanitize(mustJSON(content))}
	if isObject(res.Value) {
		out.structured = res.Value
	}
	return out
}

// errorResult is an isError result with the registry's text for a failure.
func errorResult(msg string) result {
	return result{isError: true, content: textBlocks("Error: " + msg)}
}

// textBlocks returns a content array of one text block per text.
func textBlocks(texts ...string) json.RawMessage {
	blocks := make([]tool.Content, len(texts))
	for i, s := range texts {
		blocks[i] = tool.Text(s)
	}
	return mustJSON(blocks)
}

// isObject reports whether v is a JSON object.
func isObject(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && v[0] == '{'
}

// hasSchema reports whether b holds a JSON value other than null.
func hasSchema(b json.RawMessage) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && string(b) != "null"
}

// fromRaw maps the raw JSON of an MCP tools/call result to a result:
// isError kept; content blocks kept, sanitized;
// structuredContent kept unless null; a result without a content array
// (the legacy toolResult shape, or none) becomes its projected text.
func fromRaw(raw json.RawMessage, name string) (result, error) {
	members, err := resultMembers(raw)
	if err != nil {
		return result{}, fmt.Errorf("tool %q: %w", name, err)
	}
	var res result
	res.isError = string(members.isError) == "true"
	if content := members.content; len(content) > 0 && content[0] == '[' {
		res.content = sanitize(content)
	} else {
		p, err := projection.Project(raw, projection.Options{RawName: name})
		if err != nil {
			return result{}, err // unreachable: raw is an object
		}
		res.content = textBlocks(p.Text)
	}
	if s := members.structured; hasSchema(s) {
		res.structured = s
	}
	return res, nil
}

// wireMembers are the members of a tools/call result fromRaw reads.
type wireMembers struct{ isError, content, structured json.RawMessage }

// resultMembers picks the members fromRaw reads out of raw, valid JSON
// (the registry checks a source's Wire), as decoding it into a map would:
// null is an object without members, the last of a repeated member counts.
// The scanner allocates nothing; the map cost three allocations a member
// on every forwarded call.
func resultMembers(raw json.RawMessage) (wireMembers, error) {
	var m wireMembers
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return m, nil
	}
	if len(raw) == 0 || raw[0] != '{' {
		return m, errors.New("result is not a JSON object")
	}
	for key, val := range projection.Members(raw) {
		switch {
		case projection.KeyIs(key, "isError"):
			m.isError = val
		case projection.KeyIs(key, "content"):
			m.content = val
		case projection.KeyIs(key, "structuredContent"):
			m.structured = val
		}
	}
	return m, nil
}

// sanitize returns content (a JSON array) with every block the go-sdk
// cannot decode replaced by a text block holding its projection; content
// itself when every block decodes.
func sanitize(content json.RawMessage) json.RawMessage {
	if decodable(content) {
		return content
	}
	var blocks []json.RawMessage
	if err := json.Unmarshal(content, &blocks); err != nil {
		return textBlocks("[unsupported MCP content: not an array]") // unreachable: callers pass an array
	}
	out := []byte{'['}
	for i, b := range blocks {
		if i > 0 {
			out = append(out, ',')
		}
		if decodable(append(append([]byte{'['}, b...), ']')) {
			out = append(out, b...)
			continue
		}
		out = append(out, mustJSON(tool.Text(diagnostic(b)))...)
	}
	return append(out, ']')
}

// decodable reports whether the go-sdk decodes the content array. An
// array of plain text blocks (the common result) is answered without the
// SDK's decoder, whose every run allocates a 32 KiB buffer.
func decodable(content json.RawMessage) bool {
	if plainTexts(content) {
		return true
	}
	var probe mcp.CallToolResult
	return json.Unmarshal(append(append([]byte(`{"content":`), content...), '}'), &probe) == nil
}

// plainTexts reports whether content, valid JSON, is an array of blocks
// that each have exactly a "type" of "text" and a string "text" (keys
// without escapes): blocks the SDK always decodes.
func plainTexts(content json.RawMessage) bool {
	if len(content) == 0 || content[0] != '[' {
		return false
	}
	for block := range projection.Elements(content) {
		if block[0] != '{' {
			return false
		}
		typed, texted := false, false
		for key, val := range projection.Members(block) {
			switch {
			case projection.KeyIs(key, "type") && string(val) == `"text"`:
				typed = true
			case projection.KeyIs(key, "text") && val[0] == '"':
				texted = true
			default:
				return false
			}
		}
		if !typed || !texted {
			return false
		}
	}
	return true
}

// diagnostic is the projected text of one content block: what a model
// would see of it (docs/upstream.md §4.6).
func diagnostic(block json.RawMessage) string {
	p, err := projection.Project(append(append([]byte(`{"content":[`), block...), ']', '}'), projection.Options{})
	if err != nil {
		return "[unsupported MCP content block]" // unreachable: the wrapper is an object
	}
	return p.Text
}

// mustJSON marshals a value that always marshals, without HTML escaping so
// texts keep their bytes.
func mustJSON(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("gateway: marshaling %T: %v", v, err)) // a fixed, marshalable type
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// seen notes a request of method on session: the session's activity (a
// new one may evict the one idle longest) and the Observer. In stateless
// mode every session lives for its request only, as the take's
// calls, which have none: neither counts against MaxSessions nor evicts.
func (g *Gateway) seen(ctx context.Context, session *mcp.ServerSession, method string) {
	if !g.statelessIn(ctx) && !serverwire.OneRequestSession(session, method) && g.touch(session) {
		g.log.Debug("client session started", "session", session.ID())
		g.evictIdle(session, IdentityOf(ctx))
	}
	if g.opts.Observer != nil && !strings.HasPrefix(method, "notifications/") {
		g.opts.Observer.Request(method)
	}
}

// middleware runs around every request the server receives. A tools/call
// goes the gateway's one call path (serveCall) instead of the SDK's
// dispatch, its result's content array put on the wire as is
// (sdkwire.RawResult), so blocks reach the client byte for byte (unknown
// fields, key order, number digits); the SDK's own fields (_meta,
// resultType, isError, structuredContent) are marshaled by the SDK. A
// request whose handler parks until cancelled (a subscriptions/listen
// stream) is tracked like a call, so closing a session always ends it:
// the SDK's own cancellation misses a listen that arrives while the
// session closes, and its Close then waits forever
// (sdkwire.ParksUntilCancelled).
func (g *Gateway) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/call" {
			return g.sdkCall(ctx, req)
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		g.seen(ctx, ss, method)
		if err := g.awaitReadyOn(ctx, ss, nil, streamOf(req.GetExtra()), method); err != nil {
			return nil, err
		}
		switch {
		case method == "initialize" || method == "server/discover":
			if p, ok := req.GetParams().(*mcp.InitializeParams); ok {
				// The session keeps the version it is answered, not
				// the one asked (a client asking 2026-07-28 is
				// answered 2025-11-25, and served so).
				sdkwire.NegotiateInitialize(p)
			}
			res, err := next(ctx, method, req)
			g.setCapabilities(res)
			return res, err
		case sdkwire.ParksUntilCancelled(method):
			ctx, cancel := context.WithCancelCause(ctx)
			defer cancel(nil)
			c := &inflight{session: ss, cancel: cancel, stream: streamOf(req.GetExtra())}
			if err := g.track(c); err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
			}
			defer g.untrack(c)
			return next(withListenHeader(ctx, req), method, req)
		case method == "tools/list":
			res, err := next(ctx, method, req)
			return g.withTaskSupport(ss, res, err)
		}
		return next(ctx, method, req)
	}
}
