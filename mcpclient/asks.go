//lint:file-ignore SA1019 MCP 2026-07-28 deprecates logging, sampling and roots (SEP-2577) but keeps them working for at least a year; 2025-11-25 servers use them, and the bridge carries them.

package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/internal/serverwire"
	"github.com/mcpbridge/mcpbridge/internal/tasks"
	"github.com/mcpbridge/mcpbridge/internal/textcut"
	"github.com/mcpbridge/mcpbridge/tool"
)

// caller is one call in flight and what its consumer takes of the
// server's requests and log messages (nil when it takes none). It is the
// call's context too: the caller's, carrying the caller itself (see
// markCall). Everything but Value is its parent's, so the context package
// sees through it as through a context.WithValue, and a call costs no
// context layer of its own here.
type caller struct {
	context.Context
	ask  tool.AskFunc
	log  tool.LogFunc
	call atomic.Pointer[sdkwire.Slot] // its tools/call's, once sent (markCall)
	// waiting counts its requests put to its consumer and not answered
	// yet (asking): a call whose server waits for an answer is not the
	// one a new request of the server comes from.
	waiting atomic.Int32

	// Under callers.mu. ended carries the call's values and is done
	// when the call returns: its requests are put to its consumer with
	// it, and end with it. Made for the first request (callers.ended):
	// most calls have none.
	ended context.Context
	end   context.CancelFunc
	left  bool // the call returned
	at    int  // its index in callers.list while in flight
}

type callerKey struct{}

// Value is the caller's for callerKey, else its context's.
func (cl *caller) Value(key any) any {
	if key == (callerKey{}) {
		return cl
	}
	return cl.Context.Value(key)
}

// asking is cl.ask, counted in cl.waiting while it waits for the answer.
func (cl *caller) asking() tool.AskFunc {
	return func(ctx context.Context, a tool.Ask) (json.RawMessage, error) {
		cl.waiting.Add(1)
		defer cl.waiting.Add(-1)
		return cl.ask(ctx, a)
	}
}

// callers are the server's calls in flight, every one of them. On
// protocol 2025-11-25 a request or log message of the server names no
// call, so unless it came on a call's own HTTP stream (relatedAsks) it
// belongs to a call for certain only when that call is the only one in
// flight: handing it to the latest call instead would let a gateway
// client answer, or read, what another client's call started (README.md,
// "Servers that ask").
type callers struct {
	mu   sync.Mutex
	list []*caller // in no order
}

// enter records the call of ctx and returns it, the context to run the
// call in (see markCall); leave ends it.
func (c *callers) enter(ctx context.Context) *caller {
	cl := &caller{Context: ctx, ask: tool.AskFrom(ctx), log: tool.LogFrom(ctx)}
	c.mu.Lock()
	cl.at = len(c.list)
	c.list = append(c.list, cl)
	c.mu.Unlock()
	return cl
}

// leave ends cl, which returned.
func (c *callers) leave(cl *caller) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl.left = true
	if cl.end != nil {
		cl.end()
	}
	// The order of the list means nothing: the last call takes cl's place.
	last := c.list[len(c.list)-1]
	c.list[cl.at], last.at = last, cl.at
	c.list[len(c.list)-1] = nil
	c.list = c.list[:len(c.list)-1]
}

// ended returns cl.ended, made on first use (done at once when cl left).
func (c *callers) ended(cl *caller) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl.ended == nil {
		cl.ended, cl.end = context.WithCancel(context.WithoutCancel(cl.Context))
		if cl.left {
			cl.end()
		}
	}
	return cl.ended
}

// sole returns the only call in flight, or nil when there is none or more
// than one.
func (c *callers) sole() *caller {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.list) != 1 {
		return nil
	}
	return c.list[0]
}

// of returns the call in flight whose tools/call is call, or nil.
func (c *callers) of(call *sdkwire.Slot) *caller {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cl := range c.list {
		if cl.call.Load() == call {
			return cl
		}
	}
	return nil
}

// asker returns the call a request of the server that names no call can
// only come from: the only call in flight, else the only one whose server
// waits for no answer of its consumer (a call whose question is
// outstanding, parked at a gateway client that may never answer, does
// not ask again meanwhile; README.md, "Servers that ask"); nil when no
// or more than one call qualifies.
func (c *callers) asker() *caller {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.list) == 1 {
		return c.list[0]
	}
	var free *caller
	for _, cl := range c.list {
		if cl.waiting.Load() > 0 {
			continue
		}
		if free != nil {
			return nil
		}
		free = cl
	}
	return free
}

// ambiguous reports whether more than one call is in flight.
func (c *callers) ambiguous() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.list) > 1
}

// callersAsk is the AskFunc of the call a request of method, arriving
// with ctx, certainly belongs to: the one ctx names (protocol 2026-07-28,
// where a request is part of its call's result), else the one whose HTTP
// stream it came on (found by decoded, the encoding of its decoded
// params), else the only call in flight that can ask (callers.asker);
// nil when none is certain or its
// consumer takes no requests. ended is done when that call returns (nil
// when ctx is the call's own).
func (s *Server) callersAsk(ctx context.Context, method string, decoded []byte) (fn tool.AskFunc, ended context.Context) {
	if fn := tool.AskFrom(ctx); fn != nil {
		return fn, nil
	}
	if call, tied := s.related.take(method, decoded); tied {
		if cl := s.callers.of(call); cl != nil && cl.ask != nil {
			return cl.asking(), s.callers.ended(cl)
		}
		return nil, nil // its call is over, or takes no requests: no other may
	}
	if cl := s.callers.asker(); cl != nil && cl.ask != nil {
		return cl.asking(), s.callers.ended(cl)
	}
	return nil, nil
}

// asker returns who answers a request of the server that arrived with ctx:
// the consumer of the call it certainly belongs to, else Options.Ask; nil
// when no one can. ended is as for callersAsk.
func (s *Server) asker(ctx context.Context, method string, decoded []byte) (fn tool.AskFunc, ended context.Context) {
	if fn, ended := s.callersAsk(ctx, method, decoded); fn != nil {
		return fn, ended
	}
	return s.opts.Ask, nil
}

// errNoOneToAsk refuses a request no consumer can answer.
var errNoOneToAsk = errors.New("no client is there to answer this request")

// declined is the answer to an elicitation no consumer can take.
var declined = json.RawMessage(`{"action":"decline"}`)

// ask puts one request of the server to its consumer and decodes the
// answer into out. Every request is logged with its method. An
// elicitation that could belong to more than one call, or that finds
// maxPendingAsks waiting already, is declined; other requests no one can
// answer fail.
func (s *Server) ask(ctx context.Context, method string, params any, out any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	answer, err := s.askRaw(ctx, method, raw)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("the answer to %s is not a valid result: %w", method, err)
	}
	return nil
}

// askRaw puts one request of the server, params as written, to the
// consumer of the call it certainly belongs to (else the server's own
// consumer), and returns the answer as written: ask for the SDK's
// handlers, and the tasks beneath the SDK (internal/tasks), which read
// and write raw JSON.
func (s *Server) askRaw(ctx context.Context, method string, raw json.RawMessage) (json.RawMessage, error) {
	s.log.Info("server request", "method", method)
	// Taken first: a request refused below leaves nothing of it kept.
	written, asWritten := s.sent.take(method, raw)
	// What the entry lets through, whichever way the request came (the
	// SDK's handlers, a task's questions): one gate.
	// An elicitation goes to whoever the call's consumer is (a person, a
	// gateway's client), who sees it.
	switch method {
	case tool.AskElicit:
	case tool.AskSample:
		if !s.samples() {
			s.related.take(method, raw)
			return nil, errors.New("sampling is not allowed for this server (allowSampling), or its consumer takes none")
		}
	case tool.AskRoots:
		return json.Marshal(s.rootsFor(ctx, &mcp.ListRootsParams{}))
	default:
		return nil, fmt.Errorf("the server asked %q, which the bridge does not answer", method)
	}
	fn, ended := s.asker(ctx, method, raw)
	if fn == nil && method == tool.AskElicit && s.callers.ambiguous() {
		s.log.Info("elicitation declined: more than one call in flight, and it names none of them")
		return declined, nil
	}
	if fn == nil {
		return nil, errNoOneToAsk
	}
	if asWritten {
		raw = written // as the server wrote it: the order of a form's fields
	}
	answer, err := s.consult(ctx, fn, ended, tool.Ask{Method: method, Params: raw, Server: s.cfg.ServerName})
	if errors.Is(err, errTooManyAsks) && method == tool.AskElicit {
		return declined, nil
	}
	return answer, err
}

// clientFeatures sets what the bridge offers the server in opts: handlers
// for the requests its consumers can answer, and the roots.
func (s *Server) clientFeatures(opts *mcp.ClientOptions) {
	caps := &mcp.ClientCapabilities{}
	s.sent.offered.Store(s.opts.Elicit)
	if s.opts.Elicit {
		caps.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}
		opts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			res := &mcp.ElicitResult{}
			return res, s.ask(ctx, tool.AskElicit, req.Params, res)
		}
	}
	if s.opts.Sample && s.cfg.AllowSampling {
		opts.CreateMessageWithToolsHandler = func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			res := &mcp.CreateMessageWithToolsResult{}
			return res, s.ask(ctx, tool.AskSample, req.Params, res)
		}
	}
	// Roots always: an empty list (an entry without roots) tells a server
	// that would take them (server-filesystem) to keep its own settings.
	caps.RootsV2 = &mcp.RootCapabilities{ListChanged: true}
	// Tasks the server makes of a call are followed (internal/tasks).
	caps.Extensions = map[string]any{tasks.Extension: map[string]any{}}
	opts.Capabilities = caps
	// Input-required results are answered by the bridge's own loop
	// (multiRoundTrip), which asks a consumer for roots too.
	opts.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
}

// elicitAsIs hands an elicitation/create request to the consumer before
// the SDK's client checks its schema: that check refuses shapes MCP allows
// (a titled multi-select, SEP-1330: array items of type string with
// anyOf), and the consumer (a person's form, a gateway's client) validates
// what it is given anyway.
func (s *Server) elicitAsIs(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		params, ok := req.GetParams().(*mcp.ElicitParams)
		if method != tool.AskElicit || !ok {
			return next(ctx, method, req)
		}
		res := &mcp.ElicitResult{}
		if err := s.ask(ctx, tool.AskElicit, params, res); err != nil {
			return nil, err
		}
		return res, nil
	}
}

// maxSentAsks bounds the requests kept as written: more than a few at once
// are not answered by anyone anyway.
const maxSentAsks = 16

// maxSentAskBytes bounds one request kept as written: a form is far
// smaller, and a larger request reaches its consumer as decoded (its
// fields in the SDK's order).
const maxSentAskBytes = 64 << 10

// sentAsks keeps the params of the server's latest elicitation requests as
// it wrote them. The SDK hands a handler the request decoded, its schema a
// map that loses the order of a form's fields; a request decoded here the
// same way finds its written form by its encoding. A request leaves when
// it is answered or refused (askRaw), or after maxSentAsks newer ones.
type sentAsks struct {
	offered atomic.Bool // elicitation is offered the server (clientFeatures): else nothing is kept
	mu      sync.Mutex
	list    []sentAsk
}

type sentAsk struct {
	key askDigest       // of the encoding of the decoded params
	raw json.RawMessage // as written
}

// note keeps an elicitation request the connection read (sdkwire
// Table.OnRequest); it runs on the reading goroutine.
func (a *sentAsks) note(method string, params json.RawMessage) {
	if method != tool.AskElicit || !a.offered.Load() || len(params) > maxSentAskBytes {
		return
	}
	var p mcp.ElicitParams
	if json.Unmarshal(params, &p) != nil {
		return
	}
	key, err := json.Marshal(&p)
	if err != nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.list = append(a.list, sentAsk{digest(method, key), slices.Clone(params)})
	if len(a.list) > maxSentAsks {
		a.list = slices.Delete(a.list, 0, 1)
	}
}

// take returns, and forgets, the written params of method's request whose
// decoded params encode as decoded.
func (a *sentAsks) take(method string, decoded []byte) (json.RawMessage, bool) {
	if method != tool.AskElicit {
		return nil, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	key := digest(method, decoded)
	i := slices.IndexFunc(a.list, func(s sentAsk) bool { return s.key == key })
	if i < 0 {
		return nil, false
	}
	raw := a.list[i].raw
	a.list = slices.Delete(a.list, i, i+1)
	return raw, true
}

// rootList is what a server is offered as its roots.
type rootList = []*mcp.Root

// newClient is the SDK client of one connection attempt, with the roots
// and the elicitation hook.
func (s *Server) newClient(opts *mcp.ClientOptions) *mcp.Client {
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpbridge", Version: Version}, opts)
	client.AddRoots(s.roots...)
	client.AddReceivingMiddleware(s.callersRoots)
	client.AddSendingMiddleware(s.multiRoundTrip)
	if s.opts.Elicit {
		client.AddReceivingMiddleware(s.elicitAsIs)
	}
	return client
}

// callersRoots answers roots/list in the middle of a call, for an entry
// with roots: client (rootsFor). Other entries get their configured roots
// from the SDK's responder: a calling client never widens them.
func (s *Server) callersRoots(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != tool.AskRoots || !s.cfg.RootsFromClient {
			return next(ctx, method, req)
		}
		params, ok := req.GetParams().(*mcp.ListRootsParams)
		if !ok || params == nil {
			params = &mcp.ListRootsParams{} // as relatedAsks decodes absent params
		}
		return s.rootsFor(ctx, params), nil
	}
}

// rootsFor answers a roots/list request of the server that arrived with
// ctx (in the middle of a call, or in a call's input-required result):
// for an entry with roots: client, the roots of the consumer of the call
// the request certainly belongs to (a gateway's client), else the entry's
// own roots (none for roots: client).
func (s *Server) rootsFor(ctx context.Context, params *mcp.ListRootsParams) *mcp.ListRootsResult {
	if s.cfg.RootsFromClient {
		decoded, _ := json.Marshal(params)
		if fn, ended := s.callersAsk(ctx, tool.AskRoots, decoded); fn != nil {
			if answer, err := s.consult(ctx, fn, ended, tool.Ask{Method: tool.AskRoots, Params: json.RawMessage("{}"), Server: s.cfg.ServerName}); err == nil {
				res := &mcp.ListRootsResult{}
				if json.Unmarshal(answer, res) == nil && res.Roots != nil {
					return res
				}
			}
		}
		s.log.Info("roots: client, but no calling client gives roots; offering none")
	}
	return &mcp.ListRootsResult{Roots: append(rootList{}, s.roots...)}
}

// rootsOf turns configured root paths into roots: file URIs of absolute
// paths, relative ones taken from the working directory. No paths, no
// roots.
func rootsOf(paths []string) ([]*mcp.Root, error) {
	out := make([]*mcp.Root, 0, len(paths))
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("root %q: %w", p, err)
		}
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
		out = append(out, &mcp.Root{URI: u.String(), Name: filepath.Base(abs)})
	}
	return out, nil
}

// logLevels maps MCP log levels to slog's.
var logLevels = map[string]slog.Level{
	"debug": slog.LevelDebug, "info": slog.LevelInfo, "notice": slog.LevelInfo,
	"warning": slog.LevelWarn, "error": slog.LevelError, "critical": slog.LevelError,
	"alert": slog.LevelError, "emergency": slog.LevelError,
}

// logMessage is what the bridge reads of a notifications/message, and all
// it passes on.
type logMessage struct {
	Level  string          `json:"level"`
	Logger string          `json:"logger,omitempty"`
	Data   json.RawMessage `json:"data"`
}

// logged handles a notifications/message the connection read: to the log
// at its level, and to the consumer of the only call in flight when it
// listens (a message names no call; see callers); within the server's
// rate limit (logLimit). Both get the message rebuilt from its level (one
// of the protocol's, else info), logger and data, the last two cut to
// maxNoticeBytes: anything else the server put in it (a _meta, another
// member) could be as large as a frame, and a consumer may queue it.
func (s *Server) logged(params json.RawMessage) {
	var m logMessage
	if !s.logs.allow() || json.Unmarshal(params, &m) != nil {
		return
	}
	level, ok := logLevels[m.Level]
	if !ok {
		m.Level, level = "info", slog.LevelInfo
	}
	if len(m.Data) > maxNoticeBytes {
		// Cut, as text: it may be any JSON value.
		m.Data, _ = json.Marshal(textcut.Marked(string(m.Data), maxNoticeBytes, "…"))
	}
	m.Logger = textcut.Marked(m.Logger, maxNoticeBytes, "…")
	s.logs.report(s.log)
	s.log.Log(context.Background(), level, "server log message", "level", m.Level, "logger", m.Logger, "data", string(m.Data))
	if cl := s.callers.sole(); cl != nil && cl.log != nil {
		rebuilt, _ := json.Marshal(m) // data is a JSON value: Unmarshal checked it
		cl.log(rebuilt)
	}
}

// requestMeta is the _meta of a request on gen: on protocol 2026-07-28,
// where a request carries the log level it wants, logLevel; nil otherwise.
func (s *Server) requestMeta(gen *generation) mcp.Meta {
	if s.cfg.LogLevel == "" || !listens(gen) {
		return nil
	}
	return mcp.Meta{mcp.MetaKeyLogLevel: s.cfg.LogLevel}
}

// setLogLevel asks the server for log messages from logLevel up, when it
// offers logging. On 2026-07-28 each request says so itself (requestMeta)
// and logging/setLevel, which has no place there, is not sent.
func (s *Server) setLogLevel(ctx context.Context, gen *generation) {
	caps := capabilities(gen)
	if s.cfg.LogLevel == "" || caps == nil || caps.Logging == nil || listens(gen) {
		return
	}
	err := gen.session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: mcp.LoggingLevel(s.cfg.LogLevel)})
	if err != nil {
		s.log.Warn("logging/setLevel failed; the server's log level is its own", "level", s.cfg.LogLevel, "err", err)
	}
}

// callerAloneKey marks a call whose capabilities are its caller's alone,
// without the extensions the bridge adds (withCallerMeta).
type callerAloneKey struct{}

// callerWithoutTasks reports whether the consumer's own client
// (tool.CallerFrom), described to a server of protocol 2026-07-28, did
// not declare the tasks extension: it must not get a task-required
// tool's task, which the bridge would otherwise follow for it.
func (s *Server) callerWithoutTasks(ctx context.Context, gen *generation) bool {
	caller := describedCaller(ctx, gen)
	if caller == nil {
		return false
	}
	declared, _ := caller[mcp.MetaKeyClientCapabilities].(map[string]any)
	exts, _ := declared["extensions"].(map[string]any)
	_, ok := exts[tasks.Extension]
	return !ok
}

// describedCaller is the consumer's own client (tool.CallerFrom) when it
// is described to gen's server, one of protocol 2026-07-28; nil
// otherwise.
func describedCaller(ctx context.Context, gen *generation) map[string]any {
	caller := tool.CallerFrom(ctx)
	init := gen.session.InitializeResult()
	if caller == nil || init == nil || init.ProtocolVersion != serverwire.PerRequestVersion {
		return nil
	}
	return caller
}

// withCallerMeta adds to meta, for a server of protocol 2026-07-28, the
// per-request description of the consumer's own client (tool.CallerFrom:
// a gateway's caller): its clientInfo, and its clientCapabilities limited
// to what the bridge relays to it (elicitation, sampling where the entry
// allows it, roots) plus the bridge's own extensions (it follows the
// server's tasks itself), but for a call of the caller alone
// (callerAloneKey). A server then refuses, with -32021, what the
// caller cannot answer, instead of running a tool for a client it
// believes can.
func (s *Server) withCallerMeta(ctx context.Context, gen *generation, meta mcp.Meta) mcp.Meta {
	caller := describedCaller(ctx, gen)
	if caller == nil {
		return meta
	}
	if meta == nil {
		meta = mcp.Meta{}
	}
	if info, ok := caller[mcp.MetaKeyClientInfo]; ok {
		meta[mcp.MetaKeyClientInfo] = info
	}
	declared, _ := caller[mcp.MetaKeyClientCapabilities].(map[string]any)
	relayed := map[string]bool{"elicitation": s.opts.Elicit, "sampling": s.samples(), "roots": true}
	caps := map[string]any{"extensions": map[string]any{tasks.Extension: map[string]any{}}}
	if alone, _ := ctx.Value(callerAloneKey{}).(bool); alone {
		caps = map[string]any{}
	}
	for key, v := range declared {
		if relayed[key] {
			caps[key] = v
		}
	}
	meta[mcp.MetaKeyClientCapabilities] = caps
	return meta
}
