package gateway

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/projection"
	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/internal/serverwire"
)

// The gateway's own Streamable HTTP transport (docs/engine.md, design D),
// in place of the SDK's StreamableHTTPHandler for stateful sessions. The
// SDK's ServerSession is the one session engine (initialize, every method,
// its own requests); a session's connection (wireConn) decodes each POST
// once (sdkwire.DecodeValid: screen checked that it is JSON), the take
// serve --stdio uses answers
// tools/call beneath the session, and the connection's Write routes every
// message to the stream of the request it answers or belongs to, else to
// the session's GET stream. What the SDK's handler does besides, the
// transport does as it does, with its status codes and words: the
// protocol-version, Content-Type, Accept and session checks, batches
// below 2025-06-18, the event store's priming events and resumption with
// Last-Event-ID, the idle timeout. One difference, on purpose: a
// response ready before anything else was sent on its stream goes out as
// one application/json body (the SDK's JSONResponse framing), which every
// client reads and which costs a client less than an SSE stream.

// httpTransport serves the stateful Streamable HTTP sessions of a gateway.
type httpTransport struct {
	g    *Gateway
	idle time.Duration // a session with no POST for this long is closed
	// requests maps the RequestExtra of each request in flight to its id,
	// for tag (the SDK's own request id is out of reach).
	requests sync.Map // *mcp.RequestExtra → jsonrpc.ID
	// statelessTasks is every stateless POST's wireConn.tasks.
	statelessTasks func(*jsonrpc.Request) bool

	mu       sync.Mutex
	sessions map[string]*wireSession // by session id; guarded by mu
}

func newTransport(g *Gateway, idle time.Duration) *httpTransport {
	t := &httpTransport{g: g, idle: idle, sessions: make(map[string]*wireSession)}
	t.statelessTasks = func(req *jsonrpc.Request) bool { return g.statelessTaskBody(req) != nil }
	g.server.AddReceivingMiddleware(t.tag)
	return t
}

// tag gives a request the SDK serves its id in the context, so that what
// its handler sends reaches its stream (wireConn.Write), as a taken
// call's does.
func (t *httpTransport) tag(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if id, ok := t.requests.LoadAndDelete(req.GetExtra()); ok {
			ctx = sdkwire.WithRequest(ctx, id.(jsonrpc.ID))
		}
		return next(ctx, method, req)
	}
}

// supportedVersions are the protocol versions the gateway's server
// speaks (it narrows none), newest first.
var supportedVersions = mcp.SupportedProtocolVersions()

// unsupportedVersion reports a request whose Mcp-Protocol-Version the
// transport refuses (400) before anything else.
func unsupportedVersion(r *http.Request) bool {
	v := first(r.Header, "Mcp-Protocol-Version")
	return v != "" && v < serverwire.PerRequestVersion && !slices.Contains(supportedVersions, v)
}

// ServeHTTP serves one request of the endpoint, as the SDK's stateful
// handler does.
func (t *httpTransport) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t.serve(w, r, nil)
}

// serve is ServeHTTP; watch, when set, is serveMCP's watch of a POST's
// client, which the session's watch of the POST joins (servingPOST).
func (t *httpTransport) serve(w http.ResponseWriter, r *http.Request, watch *clientWatch) {
	if unsupportedVersion(r) {
		http.Error(w, "Bad Request: Unsupported protocol version (supported versions: "+strings.Join(supportedVersions, ",")+")", http.StatusBadRequest)
		return
	}
	if t.g.stateless(r) {
		t.serveStateless(w, r, watch)
		return
	}
	switch r.Method {
	case http.MethodGet:
		t.serveGET(w, r)
	case http.MethodPost:
		t.servePOST(w, r, watch)
	case http.MethodDelete:
		if s := t.lookup(w, r, "DELETE"); s != nil {
			s.awaitPOSTs(answerWait) // the answers of the calls serveDelete cancelled, which Close would drop
			s.session.Close()
			// Gone before the answer: a request the client sends next
			// is not found, where the session's end, noted once its
			// Wait returns, might not be yet (it got an empty 200).
			t.forget(first(r.Header, "Mcp-Session-Id"), s)
			w.WriteHeader(http.StatusNoContent)
		}
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
	}
}

// lookup returns the session r names, or answers r with why not.
func (t *httpTransport) lookup(w http.ResponseWriter, r *http.Request, method string) *wireSession {
	id := first(r.Header, "Mcp-Session-Id")
	if id == "" {
		http.Error(w, "Bad Request: "+method+" requires an Mcp-Session-Id header", http.StatusBadRequest)
		return nil
	}
	t.mu.Lock()
	s := t.sessions[id]
	t.mu.Unlock()
	if s == nil {
		http.Error(w, "session not found", http.StatusNotFound)
	}
	return s
}

func (t *httpTransport) serveGET(w http.ResponseWriter, r *http.Request) {
	if _, sse := accepts(r.Header["Accept"]); !sse {
		http.Error(w, "Accept must contain 'text/event-stream' for GET requests", http.StatusBadRequest)
		return
	}
	if s := t.lookup(w, r, "GET"); s != nil {
		s.conn.serveGET(w, r)
	}
}

func (t *httpTransport) servePOST(w http.ResponseWriter, r *http.Request, watch *clientWatch) {
	if !postHeadersOK(w, r) {
		return
	}
	if first(r.Header, "Mcp-Session-Id") == "" {
		t.open(w, r, watch)
		return
	}
	if s := t.lookup(w, r, "POST"); s != nil {
		p := s.servingPOST(r, watch)
		defer p.done()
		s.conn.servePOST(w, r, p)
	}
}

// open connects a session on a new connection, through the take, and
// serves its first POST; a session whose first POST did not initialize it
// is closed.
func (t *httpTransport) open(w http.ResponseWriter, r *http.Request, watch *clientWatch) {
	c := newWireConn(rand.Text(), t.g.events, &t.requests)
	c.headerSchema = t.g.headerSchemaFor
	var current atomic.Pointer[mcp.ServerSession]
	// As serve --stdio's connections: the session's tasks and tools/call
	// taken beneath the SDK's session, and the "tasks" capability (added
	// outside the take, which then sees c itself: sdkwire.DirectConn).
	taking := &sdkwire.TakingTransport{Transport: wireTransport{c}, Take: t.g.takeTasks(&current, t.g.takeSkills(&current, t.g.take(&current))), Routes: true}
	ss, err := t.g.server.Connect(context.WithoutCancel(r.Context()), &sdkwire.ServerCapabilityTransport{Transport: taking, Add: taskCapability}, nil)
	if err != nil {
		t.g.log.Error("HTTP session not connected", "err", err)
		http.Error(w, "failed connection", http.StatusInternalServerError)
		return
	}
	current.Store(ss)
	s := t.add(c, ss)
	p := s.servingPOST(r, watch)
	c.servePOST(w, r, p)
	p.done()
	if ss.InitializeParams() == nil {
		ss.Close()
	}
}

// serveStateless serves a POST without a session (a 2026-07-28 request,
// or every one with Options.Stateless), as the SDK's stateless handler
// does: on a session of its own, connected with the state the POST
// implies (below 2026-07-28: initialized at the header's version, log
// level "info"; from 2026-07-28 none: each request's _meta says), closed
// once the POST is answered. Its calls are taken beneath it as on a
// session (a 2026-07-28 POST's: takePerRequest); the session makes no
// request of the client.
//
// watch is serveMCP's watch of the POST's client, nil for none: only with
// it may the POST's calls run on its goroutine, since it is what ends them
// when the client leaves (giveUp, and the session's input: endInput).
func (t *httpTransport) serveStateless(w http.ResponseWriter, r *http.Request, watch *clientWatch) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	if !postHeadersOK(w, r) {
		return
	}
	msgs, batch, version, ok := readMessages(w, r)
	if !ok {
		return
	}
	c := newWireConn("", nil, &t.requests)
	c.headerSchema = t.g.headerSchemaFor
	c.stateless, c.watched = true, watch != nil
	var current atomic.Pointer[mcp.ServerSession]
	taking := &sdkwire.TakingTransport{Transport: wireTransport{c}, Take: t.g.takeStateless(&current), Routes: true}
	c.tasks = t.statelessTasks
	ss, err := t.g.server.Connect(context.WithoutCancel(r.Context()), taking, &mcp.ServerSessionOptions{State: statelessState(version, msgs)})
	if err != nil {
		t.g.log.Error("HTTP stateless session not connected", "err", err)
		http.Error(w, "failed connection", http.StatusInternalServerError)
		return
	}
	current.Store(ss)
	defer ss.Close()
	if watch != nil {
		watch.endInput(c.endRead)
	}
	c.serveMessages(w, r, nil, msgs, batch, version)
	if stream := first(r.Header, streamHeader); stream != "" && r.Context().Err() != nil {
		// The client left: its calls end for that, before the session's
		// end below cancels them with its read side's EOF (serveMCP's
		// watch gives up on the stream too, but may come later).
		t.g.giveUp(stream)
	}
	// The POST is over, answered or left by its client: the requests the
	// session still serves end with it, as the SDK's transport ends a
	// stateless POST's handlers (cancellationPropagator, unexported). The
	// session's read side ends, and its dispatch cancels them; Close
	// alone would wait for them.
	c.endRead()
}

// statelessState is the state of a stateless POST's session, as the
// SDK's handler makes it: below 2026-07-28 initialized (unless the POST
// carries initialize or notifications/initialized itself) at the
// header's version, log messages from "info" up; from 2026-07-28 only
// the log level, which passes every message (perRequestPeer filters).
// version and msgs are the POST's, as readMessages read them.
func statelessState(version string, msgs []jsonrpc.Message) *mcp.ServerSessionState {
	var initialize, initialized, perRequest bool
	for _, msg := range msgs {
		if req, ok := msg.(*jsonrpc.Request); ok {
			initialize = initialize || req.Method == "initialize"
			initialized = initialized || req.Method == "notifications/initialized"
			perRequest = perRequest || version >= serverwire.PerRequestVersion
		}
	}
	state := new(mcp.ServerSessionState)
	if perRequest {
		// The SDK's dispatch gives each request the level its _meta
		// names; a taken call filters at it itself (perRequestPeer), so
		// the session lets every level through.
		state.LogLevel = "debug"
		return state
	}
	if !initialize {
		state.InitializeParams = &mcp.InitializeParams{ProtocolVersion: version}
	}
	if !initialized {
		state.InitializedParams = new(mcp.InitializedParams)
	}
	state.LogLevel = serverwire.OneRequestLogLevel
	return state
}

// postHeadersOK checks a POST's Content-Type and Accept as the SDK's
// handler does, or answers it with why not.
func postHeadersOK(w http.ResponseWriter, r *http.Request) bool {
	if mediaType(first(r.Header, "Content-Type")) != "application/json" {
		http.Error(w, "Content-Type must be 'application/json'", http.StatusUnsupportedMediaType)
		return false
	}
	if json, sse := accepts(r.Header["Accept"]); !json || !sse {
		http.Error(w, "Accept must contain both 'application/json' and 'text/event-stream'", http.StatusBadRequest)
		return false
	}
	return true
}

// add keeps the session of c until it ends, closing it once idle for
// t.idle. Its calls are cancelled first, as on a DELETE: a session's
// Close waits for its handlers, and a call whose client dropped its
// stream (awaiting a resume) would hold it.
func (t *httpTransport) add(c *wireConn, ss *mcp.ServerSession) *wireSession {
	s := &wireSession{conn: c, session: ss, idle: t.idle, lastPOST: time.Now()}
	s.timer = time.AfterFunc(t.idle, func() {
		if !s.idleOver() {
			return
		}
		t.g.cancelCalls(ss, errSessionClosed)
		ss.Close()
	})
	t.mu.Lock()
	t.sessions[c.id] = s
	t.mu.Unlock()
	go func() {
		ss.Wait()
		s.stopTimer()
		t.forget(c.id, s)
	}()
	return s
}

// forget drops session id, while it is still s.
func (t *httpTransport) forget(id string, s *wireSession) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sessions[id] == s {
		delete(t.sessions, id)
	}
}

// wireSession is one client session: the SDK's session, its connection,
// and its idle timer, which ends it once no POST of the session has run
// for idle (as the SDK's handler times sessions out). The timer is not
// moved per POST: it fires, and looks (idleOver). Stopping and resetting
// it around every POST put a runtime timer sooner than any other on its P
// for every call, which makes the runtime wake a thread to watch it.
type wireSession struct {
	conn    *wireConn
	session *mcp.ServerSession
	idle    time.Duration

	mu       sync.Mutex
	posts    int         // POSTs being served; guarded by mu
	lastPOST time.Time   // when the last POST ended; guarded by mu
	timer    *time.Timer // nil once the session ended; guarded by mu
}

// idleOver reports, when the idle timer fires, whether the session has
// been idle for s.idle; if not, it arms the timer again for when it will
// be, at the soonest.
func (s *wireSession) idleOver() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer == nil {
		return false
	}
	left := s.idle - time.Since(s.lastPOST)
	if s.posts == 0 && left <= 0 {
		return true
	}
	if s.posts > 0 {
		left = s.idle
	}
	s.timer.Reset(left)
	return false
}

// servingPOST counts r among the session's POSTs until the watch's done
// is called or r's client leaves, whichever comes first: a call that
// runs on after its client dropped the POST (awaiting a resume) does not
// keep the session from its idle timeout. The client is watched by
// serveMCP's watch when there is one (joined), else by a watch of its own.
func (s *wireSession) servingPOST(r *http.Request, client *clientWatch) *postWatch {
	s.startPOST()
	if client != nil {
		p := &client.joined // one POST, one session's watch
		p.s = s
		client.join(p)
		return p
	}
	p := &postWatch{s: s}
	p.stop = context.AfterFunc(r.Context(), p.leave)
	return p
}

// postWatch is what the client of one POST of a session leaving does:
// the POST no longer keeps the session from its idle timeout, and the
// stream of a call running on the POST's goroutine (runNow) is let go.
type postWatch struct {
	s    *wireSession
	stop func() bool // stops its own context.AfterFunc; nil when joined to serveMCP's

	mu    sync.Mutex
	ended bool // the session no longer counts the POST; guarded by mu
	left  bool // the client left; guarded by mu
	// held and w are the stream a call running on the POST's goroutine
	// holds, and the response holding it; guarded by mu.
	held *wireStream
	w    http.ResponseWriter
}

// leave is what the client's leaving does.
func (p *postWatch) leave() {
	p.mu.Lock()
	p.left = true
	held, w := p.held, p.w
	p.held, p.w = nil, nil
	p.mu.Unlock()
	if held != nil {
		held.release(w)
	}
	p.end()
}

// end stops counting the POST among the session's, once.
func (p *postWatch) end() {
	p.mu.Lock()
	ended := p.ended
	p.ended = true
	p.mu.Unlock()
	if !ended {
		p.s.endPOST()
	}
}

// done is the POST's end: the watch stops and the POST is not counted (a
// joined watch told of the client's leaving later does nothing more).
func (p *postWatch) done() {
	if p.stop != nil {
		p.stop()
	}
	p.end()
}

// hold has s, held by w, let go when the client leaves (at once if it
// has left), until unhold.
func (p *postWatch) hold(s *wireStream, w http.ResponseWriter) {
	p.mu.Lock()
	if !p.left {
		p.held, p.w = s, w
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	s.release(w)
}

func (p *postWatch) unhold() {
	p.mu.Lock()
	p.held, p.w = nil, nil
	p.mu.Unlock()
}

func (s *wireSession) startPOST() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.posts++
}

func (s *wireSession) endPOST() {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.posts--; s.posts == 0 {
		s.lastPOST = now
	}
}

// awaitPOSTs waits, up to answerWait, until no POST of ss is being served
// over HTTP (answered): a session ended while a call of it runs answers
// the call before its Close drops what it has not written.
func (g *Gateway) awaitPOSTs(ss *mcp.ServerSession) {
	t, ok := g.engine.(*httpTransport)
	if !ok || ss.ID() == "" {
		return
	}
	t.mu.Lock()
	s := t.sessions[ss.ID()]
	t.mu.Unlock()
	if s != nil {
		s.awaitPOSTs(answerWait)
	}
}

// answerWait bounds how long a session's end waits for the answers of
// its calls it cancelled: a tool that ignores its cancellation does not
// hold the end longer.
const answerWait = 2 * time.Second

// awaitPOSTs waits until no POST of the session is being served (their
// answers written), or until wait passes.
func (s *wireSession) awaitPOSTs(wait time.Duration) {
	deadline := time.Now().Add(wait)
	for {
		s.mu.Lock()
		n := s.posts
		s.mu.Unlock()
		if n == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(2 * time.Millisecond) // rare (an end with calls in flight), and short: cancelled calls end at once
	}
}

func (s *wireSession) stopTimer() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
}

// wireTransport hands Server.Connect its connection.
type wireTransport struct{ c *wireConn }

func (t wireTransport) Connect(context.Context) (mcp.Connection, error) { return t.c, nil }

// SupportsProtocolVersion refuses 2026-07-28 and later on a stateful
// session, as the SDK's transport does (SEP-2575 is per request: a
// stateless POST's session speaks it).
func (t wireTransport) SupportsProtocolVersion(version string) bool {
	return t.c.stateless || version < serverwire.PerRequestVersion
}

// wireConn is a session's connection: messages from its POSTs in, and out
// to the stream each belongs to.
type wireConn struct {
	id    string
	store mcp.EventStore // the gateway's: every stream's events are kept for a resume; nil for none (stateless)
	// stateless: the session is a stateless POST's, which makes no
	// request of its client and has no GET stream.
	stateless bool
	// watched: a stateless POST's client is watched (serveStateless), so
	// its calls may run on the POST's goroutine.
	watched  bool
	requests *sync.Map // the transport's requests in flight, for its tag
	incoming chan jsonrpc.Message
	// headerSchema returns, for a request's caller, the input schema of
	// a served tool whose arguments Mcp-Param-* headers mirror, nil for
	// any other name (Gateway.headerSchemaFor).
	headerSchema func(ctx context.Context, header http.Header, name string) json.RawMessage
	primes       primer // writes the priming events of its streams
	// queued counts the messages handed to incoming and not yet read.
	queued atomic.Int64
	// takeNow runs a call the take takes on the POST's own goroutine
	// (sdkwire.DirectConn); set by the session's Connect, before its
	// first POST is served.
	takeNow func(*jsonrpc.Request) bool
	// tasks reports whether a stateless POST's take answers a request as
	// one of tasks (answersTasks); nil for a session's.
	tasks func(*jsonrpc.Request) bool

	// readEnded is closed by endRead: Read reports the end of the input.
	readEnded chan struct{}
	endOnce   sync.Once

	mu      sync.Mutex
	done    chan struct{}          // closed by Close; guarded by mu (for closed)
	closed  bool                   // guarded by mu
	streams map[string]*wireStream // by stream id, "" the GET stream's; guarded by mu
	// byRequest is the stream of each request in flight; guarded by mu.
	byRequest map[jsonrpc.ID]string
	// lastStream numbers the streams POSTs open (newStreamLocked);
	// guarded by mu.
	lastStream uint64
}

func newWireConn(id string, store mcp.EventStore, requests *sync.Map) *wireConn {
	c := &wireConn{id: id, store: store, requests: requests, incoming: make(chan jsonrpc.Message, 10),
		readEnded: make(chan struct{}), done: make(chan struct{}), streams: make(map[string]*wireStream), byRequest: make(map[jsonrpc.ID]string)}
	if store != nil {
		store.Open(context.Background(), id, "") // the in-memory store never fails
		c.streams[""] = &wireStream{sse: true, kept: true}
	}
	return c
}

func (c *wireConn) SessionID() string { return c.id }

// TakeNow keeps the take's run for the connection's POSTs: a stateful
// session's, and a stateless POST's whose client is watched (a call run
// on the POST is cancelled by that watch when the client leaves, not by
// the session's end, which waits for the POST).
func (c *wireConn) TakeNow(run func(*jsonrpc.Request) bool) {
	if !c.stateless || c.watched {
		c.takeNow = run
	}
}

// Close ends the session's streams and forgets their events.
func (c *wireConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	close(c.done)
	if c.store == nil {
		return nil
	}
	return c.store.SessionClosed(context.Background(), c.id)
}

func (c *wireConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-c.incoming:
		c.queued.Add(-1)
		return msg, nil
	case <-c.readEnded:
		select {
		case msg := <-c.incoming:
			c.queued.Add(-1)
			return msg, nil // what was delivered before the input ended is read first
		default:
			return nil, io.EOF
		}
	case <-c.done:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// endRead ends the session's input: Read reports its end once it has
// returned what was delivered, and the SDK's dispatch then cancels the
// requests it still serves (a stateless POST's, once the POST is over).
func (c *wireConn) endRead() { c.endOnce.Do(func() { close(c.readEnded) }) }

// errSessionEnded is what writing to an ended session gives.
var errSessionEnded = errors.New("session is closed")

// Write sends msg on the stream of the request it answers or, for what a
// request's handler or taken call sends, belongs to; anything else goes
// on the session's GET stream (a stateless session's: on its
// subscriptions/listen stream). Every event is kept in the event store
// first, so a client that is not there to read it gets it when it
// resumes. As the SDK's transport, it rejects what belongs to a request
// already answered, and a stateless session's requests to its client.
func (c *wireConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	data, err := sdkwire.EncodeMessage(msg)
	if err != nil {
		return err
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && c.stateless {
		return fmt.Errorf("%w: stateless servers cannot make requests", sdkwire.ErrRejected)
	}
	var related, answers jsonrpc.ID
	if resp, ok := msg.(*jsonrpc.Response); ok {
		related, answers = resp.ID, resp.ID
	} else {
		related, _ = sdkwire.TakenRequest(ctx)
	}
	c.mu.Lock()
	s := c.streamFor(related)
	if answers.IsValid() {
		delete(c.byRequest, answers)
	}
	closed := c.closed
	c.mu.Unlock()
	switch {
	case s == nil:
		return fmt.Errorf("%w: write to closed stream", sdkwire.ErrRejected)
	case closed:
		return errSessionEnded
	}
	if s.deliver(ctx, c, msg, data, answers) {
		c.mu.Lock()
		delete(c.streams, s.id)
		c.mu.Unlock()
	}
	return nil
}

// streamFor returns the stream of request related or, for none, the
// GET stream (a stateless session's listen stream); nil when that
// request was answered, or there is no such stream. c.mu is held.
func (c *wireConn) streamFor(related jsonrpc.ID) *wireStream {
	if related.IsValid() {
		if id, ok := c.byRequest[related]; ok {
			return c.streams[id]
		}
		return nil
	}
	for _, s := range c.streams {
		if s.listen {
			return s
		}
	}
	return c.streams[""]
}

// wireStream is one logical stream of a session: the responses to a
// POST's requests and what belongs to them, or ("" id) the GET stream.
// A request holds it while it writes (the POST, or a GET that resumed
// it).
type wireStream struct {
	id   string
	conn *wireConn // its session's, for a stream a POST opened

	mu       sync.Mutex
	w        http.ResponseWriter // the request holding the stream, nil when none; guarded by mu
	held     chan struct{}       // closed to release the holding request, nil when none; guarded by mu
	sse      bool                // w's response is an SSE stream (its headers are set); guarded by mu
	kept     bool                // its events are kept in the event store (keepLocked); guarded by mu
	pending  bool                // the priming event is not written yet; guarded by mu
	primeIdx int                 // the priming event's index, when pending; guarded by mu
	primeAt  time.Time           // when pending is due (the session's primer writes it); guarded by mu
	next     int                 // the next event's index; guarded by mu
	requests idSet               // the requests not answered yet; guarded by mu
	batch    bool                // opened by a batch: every response is an event
	listen   bool                // opened by subscriptions/listen: an SSE stream at once, for what belongs to no request
	version  string              // the protocol version its POST names
	// asks are the requests to the client sent on the stream and not yet
	// answered nor cancelled; guarded by mu.
	asks map[jsonrpc.ID]struct{}
}

// deliver keeps data as the stream's next event and writes it to the
// request holding the stream, if any; answers is the request data
// answers, if it does. It reports whether the stream is over (every
// request answered).
func (s *wireStream) deliver(ctx context.Context, c *wireConn, msg jsonrpc.Message, data []byte, answers jsonrpc.ID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if answers.IsValid() {
		s.requests.remove(answers)
	}
	over := s.id != "" && s.requests.size() == 0
	if over && len(s.asks) > 0 {
		s.cancelAsksLocked(ctx, c)
	}
	if !s.noteAskLocked(msg) {
		return over
	}
	idx := s.appendLocked(ctx, c, data)
	if s.held == nil {
		return over
	}
	if over {
		defer s.releaseLocked()
	}
	if status := errorStatus(s.version, msg); status != 0 {
		// A 2026-07-28 error the protocol gives an HTTP status: the
		// response as is, as the SDK's handler writes it.
		if !s.sse {
			serverwire.SetResponseHeaders(s.w.Header(), false) // the SDK's, set before it knew
			s.w.Header().Set("Content-Type", "application/json")
			s.w.WriteHeader(status)
		}
		s.w.Write(data)
		return over
	}
	if over && !s.sse {
		// Nothing else was written: the response alone, as one JSON
		// body.
		serverwire.SetResponseHeaders(s.w.Header(), true)
		s.w.Write(data)
		return over
	}
	s.streamLocked()
	s.w.Write(serverwire.AppendEvent(nil, "message", s.eventID(c, idx), data))
	if !over { // the last event goes out with the end of the body
		http.NewResponseController(s.w).Flush()
	}
	return over
}

// errorStatus is the HTTP status of a response on a stream of version
// that is an error the 2026-07-28 protocol maps to one (SEP-2575: an
// unknown method 404; invalid params, an unsupported version, missing
// client capabilities 400), 0 for any other message.
func errorStatus(version string, msg jsonrpc.Message) int {
	resp, ok := msg.(*jsonrpc.Response)
	if version < serverwire.PerRequestVersion || !ok || resp.Error == nil {
		return 0
	}
	var e *jsonrpc.Error
	if !errors.As(resp.Error, &e) {
		return 0
	}
	switch e.Code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams, mcp.CodeUnsupportedProtocolVersion, mcp.CodeMissingRequiredClientCapabilities:
		return http.StatusBadRequest
	}
	return 0
}

// appendLocked keeps data as the stream's next event, and returns its
// index. s.mu is held.
func (s *wireStream) appendLocked(ctx context.Context, c *wireConn, data []byte) int {
	s.next++
	if s.kept {
		c.store.Append(ctx, c.id, s.id, data) // the in-memory store never fails
	}
	return s.next - 1
}

// keepLocked keeps the stream's events in the event store from now on,
// as its response becomes an SSE stream: only a client that was sent an
// event's id can resume a stream, so a stream answered as one JSON body
// (most calls) or left before anything was written is never kept. The
// events numbered before (a priming event not written yet) are kept
// empty, so that the store numbers the next ones as the stream does.
// s.mu is held.
func (s *wireStream) keepLocked() {
	c := s.conn
	if s.kept || c == nil || c.store == nil {
		return
	}
	s.kept = true
	ctx := context.Background()
	c.store.Open(ctx, c.id, s.id) // the in-memory store never fails
	for range s.next {
		c.store.Append(ctx, c.id, s.id, nil)
	}
}

// eventID is the id of the stream's event idx, made only for an event
// written as one (a response alone goes out as a JSON body, without);
// "" without an event store: nothing to resume.
func (s *wireStream) eventID(c *wireConn, idx int) string {
	if c.store == nil {
		return ""
	}
	return serverwire.EventID(s.id, idx)
}

// noteAskLocked follows the requests to the client on a request's stream
// (not the GET stream's): one sent is pending until answered or
// cancelled. It reports false for a cancel of a request no longer
// pending, which the stream has carried already (cancelAsksLocked).
// s.mu is held.
func (s *wireStream) noteAskLocked(msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	switch {
	case s.id == "" || !ok:
	case req.IsCall():
		if s.asks == nil {
			s.asks = make(map[jsonrpc.ID]struct{})
		}
		s.asks[req.ID] = struct{}{}
	case req.Method == "notifications/cancelled":
		var p struct {
			RequestID any `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) != nil {
			return true
		}
		id, err := jsonrpc.MakeID(p.RequestID)
		if _, pending := s.asks[id]; err == nil && !pending {
			return false
		}
		delete(s.asks, id)
	}
	return true
}

// answered forgets the request to the client that resp answers.
func (c *wireConn) answered(resp *jsonrpc.Response) {
	c.mu.Lock()
	streams := make([]*wireStream, 0, len(c.streams))
	for _, s := range c.streams {
		streams = append(streams, s)
	}
	c.mu.Unlock()
	for _, s := range streams {
		s.mu.Lock()
		delete(s.asks, resp.ID)
		s.mu.Unlock()
	}
}

// cancelAsksLocked cancels on the stream, before its last response, the
// requests to the client still pending: their request has been answered,
// and the SDK's session cancels them only after (it sends its cancel off
// the asking call's return path, which then finds the stream over).
// s.mu is held.
func (s *wireStream) cancelAsksLocked(ctx context.Context, c *wireConn) {
	for id := range s.asks {
		data, err := serverwire.NotificationJSON("notifications/cancelled", &mcp.CancelledParams{Reason: context.Canceled.Error(), RequestID: id.Raw()})
		if err != nil {
			continue // unreachable: the params are plain values
		}
		idx := s.appendLocked(ctx, c, data)
		if s.held != nil {
			s.streamLocked()
			s.w.Write(serverwire.AppendEvent(nil, "message", s.eventID(c, idx), data))
		}
	}
	clear(s.asks)
}

// streamLocked makes w's response an SSE stream, and writes what is
// pending. s.mu is held and s.w is set.
func (s *wireStream) streamLocked() {
	if !s.sse {
		s.keepLocked()
		serverwire.SetResponseHeaders(s.w.Header(), false)
		s.sse = true
	}
	if s.pending {
		// Encoded only now: most calls answer first, as one JSON body.
		s.w.Write(serverwire.AppendEvent(nil, "prime", serverwire.EventID(s.id, s.primeIdx), nil)) // a failed write: the client left, its request's context ends too
		s.pending = false
	}
}

// prime writes the priming event once it is due at now, unless the
// stream's response went out first (it matters only to a client whose
// stream drops before the response). It returns when the event is due,
// zero when it is written or no longer pending.
func (s *wireStream) prime(now time.Time) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held == nil || !s.pending {
		return time.Time{}
	}
	if now.Before(s.primeAt) {
		return s.primeAt
	}
	s.streamLocked()
	http.NewResponseController(s.w).Flush()
	return time.Time{}
}

// primer writes the priming events of a session's streams whose calls
// run primeFlush without an answer, on one timer armed while a stream
// waits: a timer per POST, armed sooner than any other, woke the
// runtime's network poller on every call (a write and a wakeup more per
// call than the call itself needs).
type primer struct {
	mu      sync.Mutex
	timer   *time.Timer   // guarded by mu
	armed   bool          // the timer will fire; guarded by mu
	waiting []*wireStream // streams whose priming event was pending when added; guarded by mu
}

// add has s's priming event written once it is due (s.primeAt). s.mu may
// be held: fire takes the streams' locks without holding p.mu.
func (p *primer) add(s *wireStream) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.waiting = append(p.waiting, s)
	if p.armed {
		return
	}
	p.armed = true
	if p.timer == nil {
		p.timer = time.AfterFunc(primeFlush, p.fire)
	} else {
		p.timer.Reset(primeFlush)
	}
}

// fire writes the priming events that are due, and arms the timer again
// for the first of those still pending.
func (p *primer) fire() {
	p.mu.Lock()
	waiting := p.waiting
	p.waiting = nil
	p.mu.Unlock()
	now := time.Now()
	var later []*wireStream
	next := primeFlush
	for _, s := range waiting {
		if due := s.prime(now); !due.IsZero() {
			later = append(later, s)
			next = min(next, due.Sub(now))
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.waiting = append(p.waiting, later...)
	if len(p.waiting) == 0 {
		p.armed = false
		return
	}
	p.timer.Reset(max(next, time.Millisecond))
}

// releaseLocked lets the holding request go. s.mu is held.
func (s *wireStream) releaseLocked() {
	if s.held != nil {
		close(s.held)
	}
	s.w, s.held, s.pending = nil, nil, false
}

// release lets w go, if it still holds the stream.
func (s *wireStream) release(w http.ResponseWriter) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == w {
		s.releaseLocked()
	}
}

// hang waits while a request holds a stream: until held is closed, the
// client left or the session ended.
func (c *wireConn) hang(r *http.Request, held <-chan struct{}) {
	select {
	case <-held:
	case <-r.Context().Done():
	case <-c.done:
	}
}

// servePOST hands the POST's messages to the session and writes what
// their requests bring back, as the SDK's handler serves a session's POST.
// watch is the POST's client's.
func (c *wireConn) servePOST(w http.ResponseWriter, r *http.Request, watch *postWatch) {
	msgs, batch, version, ok := readMessages(w, r)
	if ok {
		c.serveMessages(w, r, watch, msgs, batch, version)
	}
}

// serveMessages is servePOST once the POST's messages are read
// (readMessages); watch is nil for a stateless POST's, which serveStateless
// read to make its session.
func (c *wireConn) serveMessages(w http.ResponseWriter, r *http.Request, watch *postWatch, msgs []jsonrpc.Message, batch bool, version string) {
	post, ok := c.admitRequests(w, r, msgs, version)
	if !ok {
		return
	}
	if !batch && !mcpHeadersOK(w, r, msgs[0], c.headerSchema) {
		return
	}
	for _, msg := range msgs {
		if resp, ok := msg.(*jsonrpc.Response); ok {
			c.answered(resp)
		}
	}
	if post.calls.size() == 0 {
		for _, msg := range msgs {
			if !c.deliverIn(msg) {
				http.Error(w, "session is closing", http.StatusNotFound)
				return
			}
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	post.batch = batch
	s, held, ok := c.openStream(w, r, post)
	if !ok {
		return
	}
	defer s.release(w)
	if len(msgs) == 1 && c.runNow(w, watch, s, msgs[0]) {
		return
	}
	defer c.forgetRequests(msgs)
	for _, msg := range msgs {
		if !c.deliverIn(msg) {
			return
		}
	}
	c.hang(r, held)
}

// readMessages reads a POST's messages, whether they came as a batch,
// and the protocol version of its header ("2025-03-26" for none, as the
// SDK reads it), or answers w with why not.
func readMessages(w http.ResponseWriter, r *http.Request) ([]jsonrpc.Message, bool, string, bool) {
	if len(r.Header["Last-Event-Id"]) > 0 {
		http.Error(w, "can't send Last-Event-ID for POST request", http.StatusBadRequest)
		return nil, false, "", false
	}
	body, valid, ok := readPOST(w, r)
	if !ok {
		return nil, false, "", false
	}
	msgs, batch, err := readBatch(body, valid)
	if err != nil {
		http.Error(w, fmt.Sprintf("malformed payload: %v", err), http.StatusBadRequest)
		return nil, false, "", false
	}
	version := cmp.Or(first(r.Header, "Mcp-Protocol-Version"), "2025-03-26")
	if batch && version >= "2025-06-18" {
		http.Error(w, fmt.Sprintf("JSON-RPC batching is not supported in %s and later (request version: %s)", "2025-06-18", version), http.StatusBadRequest)
		return nil, false, "", false
	}
	return msgs, batch, version, true
}

// readPOST returns a POST's body (the body screen's copy when it read the
// whole) and whether it is known to be valid JSON (screen found it so), or
// answers r with why not.
func readPOST(w http.ResponseWriter, r *http.Request) (body []byte, valid, ok bool) {
	body, valid = screened(r)
	if body == nil {
		var err error
		if body, err = io.ReadAll(r.Body); err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
				return nil, false, false
			}
			http.Error(w, "failed to read body", http.StatusBadRequest)
			return nil, false, false
		}
	}
	if len(body) == 0 {
		http.Error(w, "POST requires a non-empty body", http.StatusBadRequest)
		return nil, false, false
	}
	return body, valid, true
}

// readBatch decodes a POST's body as the SDK's handler does: a JSON array
// is a batch (an empty one an error), anything else one message. Invalid
// JSON is one message, which fails as the SDK's decoder words it; valid
// says body is known to be valid, and is not checked again.
func readBatch(body []byte, valid bool) ([]jsonrpc.Message, bool, error) {
	if !valid && !json.Valid(body) {
		msg, err := sdkwire.DecodeMessage(body)
		return []jsonrpc.Message{msg}, false, err
	}
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); trimmed[0] == '[' {
		var msgs []jsonrpc.Message
		for m := range projection.Elements(trimmed) {
			msg, err := sdkwire.DecodeValid(m)
			if err != nil {
				return nil, true, err
			}
			msgs = append(msgs, msg)
		}
		if len(msgs) == 0 {
			return nil, true, errors.New("empty batch")
		}
		return msgs, true, nil
	}
	msg, err := sdkwire.DecodeValid(body)
	return []jsonrpc.Message{msg}, false, err
}

// wirePOST is what a POST carries that its stream needs.
type wirePOST struct {
	calls      idSet  // its requests' ids
	version    string // the protocol version its stream speaks: the header's, an initialize's own
	initialize bool   // it carries initialize: the answer names the session
	listen     bool   // it carries subscriptions/listen
	batch      bool
}

// idSet is a set of request ids that makes no map for one (most POSTs
// carry one request): one, when valid, and the keys of many, which never
// hold one.
type idSet struct {
	one  jsonrpc.ID
	many map[jsonrpc.ID]struct{}
}

func (s *idSet) add(id jsonrpc.ID) {
	switch {
	case s.many != nil:
		s.many[id] = struct{}{}
	case !s.one.IsValid() || s.one == id:
		s.one = id
	default:
		s.many = map[jsonrpc.ID]struct{}{s.one: {}, id: {}}
		s.one = jsonrpc.ID{}
	}
}

func (s *idSet) remove(id jsonrpc.ID) {
	if s.one == id {
		s.one = jsonrpc.ID{}
	}
	delete(s.many, id)
}

func (s idSet) size() int {
	if s.one.IsValid() {
		return 1 + len(s.many)
	}
	return len(s.many)
}

// all yields the ids (range over it).
func (s idSet) all(yield func(jsonrpc.ID) bool) {
	if s.one.IsValid() && !yield(s.one) {
		return
	}
	for id := range s.many {
		if !yield(id) {
			return
		}
	}
}

// admitRequests checks the POST's requests as the SDK's handler does,
// gives each the request's facts (RequestExtra), and returns what the
// POST's stream needs; false when it answered w with a refusal.
func (c *wireConn) admitRequests(w http.ResponseWriter, r *http.Request, msgs []jsonrpc.Message, version string) (wirePOST, bool) {
	post := wirePOST{version: version}
	token := auth.TokenInfoFromContext(r.Context())
	for _, msg := range msgs {
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			continue
		}
		if problem := idProblem(req); problem != "" {
			// As the SDK's handler: a request without an id would never be
			// answered, a notification with one would wait for no answer.
			http.Error(w, problem, http.StatusBadRequest)
			return wirePOST{}, false
		}
		if req.Method == "initialize" {
			post.initialize = true
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			if json.Unmarshal(req.Params, &p) == nil && p.ProtocolVersion != "" {
				post.version = p.ProtocolVersion
			}
		}
		post.listen = post.listen || req.Method == "subscriptions/listen"
		if (req.IsCall() && version >= serverwire.PerRequestVersion) || carriesMetaVersion(req.Params) {
			// A call of a task tool is checked as every call is: skipped,
			// a hidden tool's would be told from one that does not exist.
			exempt := req.Method != "tools/call" && c.answersTasks(req)
			if !exempt && !c.checkPerRequest(w, r, req, version) {
				return wirePOST{}, false
			}
		}
		req.Extra = &mcp.RequestExtra{TokenInfo: token, Header: r.Header}
		if req.IsCall() {
			post.calls.add(req.ID)
		}
	}
	return post, true
}

// idProblem is what is wrong with req's id for its method, "" for
// nothing: MCP's notifications (notifications/…) have none, its requests
// have one.
func idProblem(req *jsonrpc.Request) string {
	switch notification := strings.HasPrefix(req.Method, "notifications/"); {
	case notification && req.IsCall():
		return fmt.Sprintf("invalid request: unexpected id for %q", req.Method)
	case !notification && !req.IsCall():
		return fmt.Sprintf("invalid request: missing id for %q", req.Method)
	}
	return ""
}

// answersTasks reports whether req is a request of the extension's tasks
// that a stateless POST's take answers (statelessTaskBody): the
// per-request check, which wants the request's version in its _meta, is
// not theirs (a client names its tasks requests' version in the header
// alone).
func (c *wireConn) answersTasks(req *jsonrpc.Request) bool {
	return c.tasks != nil && c.tasks(req)
}

// carriesMetaVersion reports whether params carry a 2026-07-28 request's
// version in _meta.
func carriesMetaVersion(params json.RawMessage) bool {
	return bytes.Contains(params, []byte(mcp.MetaKeyProtocolVersion)) && metaVersion(params) != ""
}

// metaVersion is the protocol version params name in _meta, "" for none.
func metaVersion(params json.RawMessage) string {
	// A request of its own around a copy: params is part of the POST's
	// body, which others read too.
	body := make([]byte, 0, len(params)+len(`{"params":}`))
	body = append(append(append(body, `{"params":`...), params...), '}')
	return serverwire.PeekMetaVersion(body)
}

// checkPerRequest checks a 2026-07-28 request as the SDK's handler does
// (SEP-2575 is per request: a session speaks the versions before it, so
// a stateful one refuses all but server/discover), and answers w when it
// refuses it: a version in the header and the same in _meta are needed.
func (c *wireConn) checkPerRequest(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request, version string) bool {
	if !c.stateless && req.Method != "server/discover" {
		legacy := slices.DeleteFunc(slices.Clone(supportedVersions), func(v string) bool { return v >= serverwire.PerRequestVersion })
		requested := cmp.Or(metaVersion(req.Params), version) // the request's own, not its header's
		data, _ := json.Marshal(mcp.UnsupportedProtocolVersionData{Supported: legacy, Requested: requested})
		writeRPCError(w, http.StatusBadRequest, req.ID, &jsonrpc.Error{Code: mcp.CodeUnsupportedProtocolVersion,
			Message: fmt.Sprintf("protocol version %q is not supported by this server", requested), Data: data})
		return false
	}
	header := first(r.Header, "Mcp-Protocol-Version")
	meta := metaVersion(req.Params)
	switch {
	case header == "":
		writeRPCError(w, http.StatusBadRequest, req.ID, &jsonrpc.Error{Code: mcp.CodeHeaderMismatch,
			Message: fmt.Sprintf("%s header is required for requests carrying %q", "Mcp-Protocol-Version", mcp.MetaKeyProtocolVersion)})
	case meta == "":
		writeRPCError(w, http.StatusBadRequest, req.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("missing or invalid _meta field %q", mcp.MetaKeyProtocolVersion)})
	case header != meta:
		writeRPCError(w, http.StatusBadRequest, req.ID, &jsonrpc.Error{Code: mcp.CodeHeaderMismatch,
			Message: fmt.Sprintf("%s header %q does not match request %s %q", "Mcp-Protocol-Version", header, mcp.MetaKeyProtocolVersion, meta)})
	default:
		return true
	}
	return false
}

// mcpHeadersOK checks the Mcp-Method, Mcp-Name and, for a tools/call of
// a tool whose schema (headerSchema) annotates arguments with
// x-mcp-header, Mcp-Param-* headers of a request of 2026-07-28 or later
// against its body, as the SDK's handler does, or answers w with why not
// (a header mismatch error).
func mcpHeadersOK(w http.ResponseWriter, r *http.Request, msg jsonrpc.Message, headerSchema func(context.Context, http.Header, string) json.RawMessage) bool {
	h := r.Header
	req, ok := msg.(*jsonrpc.Request)
	if !ok || first(h, "Mcp-Protocol-Version") < serverwire.PerRequestVersion {
		return true
	}
	var problem string
	switch method := first(h, "Mcp-Method"); {
	case method == "":
		problem = "missing required Mcp-Method header"
	case method != req.Method:
		problem = fmt.Sprintf("header mismatch: Mcp-Method header value '%s' does not match body value '%s'", method, req.Method)
	default:
		problem = nameHeaderProblem(first(h, "Mcp-Name"), req)
	}
	if problem == "" && req.Method == "tools/call" {
		problem = paramHeadersProblem(r, req.Params, headerSchema)
	}
	if problem == "" {
		return true
	}
	writeRPCError(w, http.StatusBadRequest, req.ID, &jsonrpc.Error{Code: mcp.CodeHeaderMismatch, Message: problem})
	return false
}

// nameHeaderProblem is what is wrong with the Mcp-Name header of req, a
// request whose method names a tool, resource or prompt, "" for nothing.
func nameHeaderProblem(header string, req *jsonrpc.Request) string {
	key := map[string]string{"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}[req.Method]
	if key == "" {
		return ""
	}
	if header == "" {
		return fmt.Sprintf("missing required Mcp-Name header for method %q", req.Method)
	}
	// The exact key, as the SDK reads a call (case-sensitive; "Name" is
	// another member): the name checked is the name that runs.
	var params map[string]json.RawMessage
	var name string
	if json.Unmarshal(req.Params, &params) != nil || json.Unmarshal(params[key], &name) != nil {
		return fmt.Sprintf("failed to extract name from parameters for method %q", req.Method)
	}
	if header != name {
		return fmt.Sprintf("header mismatch: Mcp-Name header value '%s' does not match body value '%s'", header, name)
	}
	return ""
}

// paramHeadersProblem is what is wrong with the Mcp-Param-* headers of a
// tools/call with params, "" for nothing or a tool that has none.
func paramHeadersProblem(r *http.Request, params json.RawMessage, headerSchema func(context.Context, http.Header, string) json.RawMessage) string {
	var p map[string]json.RawMessage
	var name string
	if json.Unmarshal(params, &p) != nil || json.Unmarshal(p["name"], &name) != nil {
		return "" // the exact key, as the call reads it (nameHeaderProblem)
	}
	schema := headerSchema(r.Context(), r.Header, name)
	if schema == nil {
		return ""
	}
	return serverwire.ParamHeadersProblem(r.Header, params, schema)
}

// writeRPCError answers with a JSON-RPC error and an HTTP status, as the
// SDK's handler does.
func writeRPCError(w http.ResponseWriter, status int, id jsonrpc.ID, e *jsonrpc.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if data, err := serverwire.ResponseJSON(id, nil, e); err == nil {
		w.Write(data)
	}
}

// forgetRequests drops the tags of msgs' requests that the SDK did not
// read (a session that ended first).
func (c *wireConn) forgetRequests(msgs []jsonrpc.Message) {
	for _, msg := range msgs {
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Extra != nil {
			c.requests.Delete(req.Extra)
		}
	}
}

// openStream opens the stream of a POST's calls, held by w: a priming
// event where the SDK writes one (sent once the calls have run
// primeFlush without an answer; its events are kept in the event store
// from then: keepLocked), the
// session's id on an initialize's answer. It refuses a request id in
// flight on the session, as the SDK's handler does.
func (c *wireConn) openStream(w http.ResponseWriter, r *http.Request, post wirePOST) (*wireStream, <-chan struct{}, bool) {
	calls := post.calls
	s := &wireStream{conn: c, w: w, held: make(chan struct{}), requests: calls, batch: post.batch, listen: post.listen,
		version: first(r.Header, "Mcp-Protocol-Version")}
	c.mu.Lock()
	for id := range calls.all {
		if _, dup := c.byRequest[id]; dup {
			c.mu.Unlock()
			refuseDuplicate(w, id)
			return nil, nil, false
		}
	}
	s.id = c.newStreamLocked()
	c.streams[s.id] = s
	for id := range calls.all {
		c.byRequest[id] = s.id
	}
	c.mu.Unlock()
	if post.initialize && c.id != "" { // a stateless one has none, and says none (as the SDK)
		w.Header().Set("Mcp-Session-Id", c.id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if serverwire.Primes(post.version, c.store != nil) {
		s.pending, s.primeIdx = true, s.next
		s.next++
		s.primeAt = time.Now().Add(primeFlush)
		c.primes.add(s)
	}
	if post.batch || post.listen {
		s.streamLocked()
		if post.listen {
			http.NewResponseController(w).Flush()
		}
	}
	return s, s.held, true
}

// newStreamLocked returns the id of a new stream of the session: the
// next number, skipping one a replay claims (acquire: a client may name
// any id). A count does: only the session's own client, which holds its
// id, can resume its streams, so their ids need not be secret (the
// crypto/rand id of every POST's stream cost more than its whole
// bookkeeping). c.mu is held.
func (c *wireConn) newStreamLocked() string {
	for {
		c.lastStream++
		id := strconv.FormatUint(c.lastStream, 36)
		if _, claimed := c.streams[id]; !claimed {
			return id
		}
	}
}

// deliverIn hands msg to the session, reporting false once it has ended.
// A request is tagged with its id for the SDK's handler (tag) only here:
// a call taken on the POST's goroutine (runNow) never reaches the SDK.
func (c *wireConn) deliverIn(msg jsonrpc.Message) bool {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Extra != nil {
		c.requests.Store(req.Extra, req.ID)
	}
	c.queued.Add(1)
	select {
	case c.incoming <- msg:
		return true
	case <-c.done:
		c.queued.Add(-1)
		return false
	}
}

// runNow runs the one request of a POST, a call, on the POST's goroutine
// when the take takes it and the session has read every message that
// came before (so it is taken in the order the read loop would take it),
// and reports whether it did. On a stateful session the stream is let
// go when the client leaves (watch, the POST's), as hang does, so that a
// GET with Last-Event-ID resumes it; the call goes on, as it does when
// the read loop takes it.
func (c *wireConn) runNow(w http.ResponseWriter, watch *postWatch, s *wireStream, msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || c.takeNow == nil || c.queued.Load() != 0 {
		return false
	}
	if c.stateless {
		// Nothing to let go when its client leaves: the stream cannot be
		// resumed, and the gateway's watch of the POST (serveMCP) cancels
		// the call.
		return c.takeNow(req)
	}
	if watch == nil {
		return false
	}
	watch.hold(s, w)
	defer watch.unhold()
	return c.takeNow(req)
}

// serveGET serves the session's GET stream or, with Last-Event-ID, resumes
// the stream that event was of: the kept events after it, then what comes
// while the stream's requests run, as the SDK's handler does.
func (c *wireConn) serveGET(w http.ResponseWriter, r *http.Request) {
	stream, last := "", -1
	if len(r.Header["Last-Event-Id"]) > 0 {
		var ok bool
		if stream, last, ok = parseEventID(first(r.Header, "Last-Event-Id")); !ok {
			http.Error(w, fmt.Sprintf("malformed Last-Event-ID %q", first(r.Header, "Last-Event-Id")), http.StatusBadRequest)
			return
		}
	}
	s, held := c.acquire(w, r, stream, last)
	if s == nil {
		return
	}
	defer s.release(w)
	c.hang(r, held)
}

// keptFrom is an event store that says where a stream's kept events
// begin (eventStore).
type keptFrom interface {
	firstKept(session, stream string) int
}

// acquire replays the events of stream after index last to w and, when
// the stream goes on, makes w hold it; nil when w was answered in full.
func (c *wireConn) acquire(w http.ResponseWriter, r *http.Request, stream string, last int) (*wireStream, <-chan struct{}) {
	c.mu.Lock()
	s, live := c.streams[stream]
	if !live {
		// Over: replayed alone, with the stream claimed meanwhile.
		s = &wireStream{id: stream, w: w}
		c.streams[stream] = s
		defer func() {
			c.mu.Lock()
			delete(c.streams, stream)
			c.mu.Unlock()
		}()
	}
	c.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if live && s.w != nil {
		http.Error(w, "stream ID conflicts with ongoing stream", http.StatusConflict)
		return nil, nil
	}
	if fk, ok := c.store.(keptFrom); ok && last < 0 {
		// No Last-Event-ID: what is kept, from the first kept event on
		// (the store may have dropped the oldest), numbered as it was.
		last = fk.firstKept(c.id, stream) - 1
	}
	var replay [][]byte
	for data, err := range c.store.After(r.Context(), c.id, stream, last) {
		if err != nil {
			http.Error(w, "failed to replay events", http.StatusBadRequest)
			return nil, nil
		}
		if len(data) > 0 {
			replay = append(replay, data)
		}
	}
	serverwire.SetResponseHeaders(w.Header(), false)
	if stream == "" {
		// Headers and a comment now: the GET stream may wait long for
		// its first message, and a proxy holds headers without data.
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, ": ok\n\n")
		http.NewResponseController(w).Flush()
	}
	var out []byte
	for _, data := range replay {
		last++
		out = serverwire.AppendEvent(out[:0], "message", serverwire.EventID(stream, last), data)
		if _, err := w.Write(out); err != nil {
			return nil, nil
		}
	}
	if !live || (stream != "" && s.requests.size() == 0) {
		return nil, nil
	}
	http.NewResponseController(w).Flush()
	s.w, s.held, s.sse, s.pending = w, make(chan struct{}), true, false
	return s, s.held
}

// primeFlush is how long a call runs before its stream's priming event
// is sent: the priming event only matters to a client whose stream drops
// before the result, and most calls answer first, as one JSON body.
const primeFlush = 10 * time.Millisecond

// first is h.Get(key) for a key in canonical form ("Mcp-Protocol-Version",
// not "MCP-Protocol-Version"; TestFirstKeysAreCanonical), read from the
// map at once: Get canonicalizes its key again on every call, which the
// POST path does often enough to show in a profile.
func first(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// accepts reports which of application/json and text/event-stream Accept
// values name, wildcards included (application/*, text/*, */*), as the
// SDK's handler reads them.
func accepts(values []string) (json, sse bool) {
	for _, v := range values {
		for token := range strings.SplitSeq(v, ",") {
			switch mediaType(token) {
			case "application/json", "application/*":
				json = true
			case "text/event-stream", "text/*":
				sse = true
			case "*/*":
				json, sse = true, true
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

// refuseDuplicate answers a POST carrying id, a request id in flight on
// its session, as the SDK's handler does (sdkwire's
// TestParityDuplicateIDRefused).
func refuseDuplicate(w http.ResponseWriter, id jsonrpc.ID) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	data, _ := serverwire.ResponseJSON(id, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("duplicate in-flight request ID %v", id.Raw())})
	w.Write(data)
}

// parseEventID reads a Last-Event-ID in the SDK's format (serverwire.EventID).
func parseEventID(id string) (stream string, idx int, ok bool) {
	stream, n, found := strings.Cut(id, "_")
	if !found || strings.Contains(n, "_") {
		return "", 0, false
	}
	idx, err := strconv.Atoi(n)
	return stream, idx, err == nil && idx >= 0
}
