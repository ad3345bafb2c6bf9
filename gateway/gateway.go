package gateway

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/buildinfo"
	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/internal/serverwire"
	"github.com/mcpbridge/mcpbridge/tool"
)

// sessionTimeout closes an HTTP session idle for this long.
const sessionTimeout = 30 * time.Minute

// DefaultShutdownTimeout bounds how long Close (or the end of a session)
// waits for the cancelled calls to be answered and the sessions to close.
const DefaultShutdownTimeout = 5 * time.Second

// DefaultMaxConnections is Options.MaxConnections's default.
const DefaultMaxConnections = 1024

// DefaultHeaderTimeout is Options.HeaderTimeout's default.
const DefaultHeaderTimeout = 2 * time.Second

// DefaultMaxCallsPerSession is Options.MaxCallsPerSession's default.
const DefaultMaxCallsPerSession = 256

// DefaultMaxCalls is Options.MaxCalls's default.
const DefaultMaxCalls = 2048

// ErrClosed is returned by the Serve methods when the Gateway is closed.
var ErrClosed = errors.New("gateway is closed")

// Causes of a cancelled call, shown to the client in its isError result.
var (
	errClosing       = errors.New("the gateway is shutting down")
	errSessionClosed = errors.New("the client session is closing")
)

// Options configure a Gateway. The zero value of every field is useful, and
// New does not modify or retain the struct (it copies what it needs).
type Options struct {
	// Implementation is what the gateway reports in initialize; nil means
	// {Name: "mcpbridge", Version: buildinfo.Version}.
	Implementation *mcp.Implementation
	// PageSize bounds one tools/list page; 0 means mcp.DefaultPageSize.
	PageSize int
	// Logger receives the gateway's and the SDK server's log lines; nil
	// discards them.
	Logger *slog.Logger
	// ShutdownTimeout bounds Close (and the end of a Serve method) after
	// in-flight calls were cancelled; 0 means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration

	// Health reports the backends for /healthz; nil reports none. It is
	// called on every health request, so it must be cheap and safe for
	// concurrent use, and what it returns is served as is: it must hold no
	// secrets (see BackendStateOf).
	Health func() []BackendState
	// BearerToken, when non-empty, is required on every HTTP request as
	// "Authorization: Bearer <token>" (else 401). It also lets Listen bind
	// a non-loopback address.
	BearerToken string
	// Authenticate, when set, replaces the BearerToken check: it returns
	// who an HTTP request is from (a stable name, never a secret), or an
	// error, which is answered 401 with its text. Each session is bound to
	// the identity that opened it: a request of another identity
	// presenting its id gets 404. It must be safe for concurrent use and
	// must not read the body.
	Authenticate func(*http.Request) (identity string, err error)
	// WellKnown, when set, serves every path under /.well-known/ without
	// authentication (after the Host and Origin checks): the OAuth
	// Protected Resource Metadata a client reads before it has a token.
	// An Authenticate error that is a *Challenge chooses the status and
	// WWW-Authenticate header of the refusal.
	WellKnown http.Handler
	// Console, when set, serves the web console at ConsolePath and under
	// it, after the Host and Origin checks and without authentication:
	// it signs its viewers in itself.
	Console http.Handler
	// AllowedOrigins lists browser origins ("https://app.example.com")
	// allowed besides loopback ones. A request whose Origin header is
	// neither is refused with 403 (DNS rebinding protection); a request
	// without Origin (any non-browser client) is not affected. Each is
	// compared with Origin exactly, but for case and a trailing slash,
	// so it takes Origin's form, scheme://host[:port]; Listen refuses
	// one that could never match, or would allow any page ("*",
	// "null"): see CheckAllowedOrigin.
	AllowedOrigins []string
	// Ready, when set, is closed once the backends' first start has
	// settled (each ready, failed, or past its startup timeout). Until
	// then the gateway answers initialize and ping at once and holds every
	// other request, so a client's first tools/list already has every tool
	// (clients that ignore list_changed would otherwise never see them);
	// /healthz reports not ready. nil means ready from the start.
	Ready <-chan struct{}
	// Refusing, when set, says why the gateway serves no call now (a Gate
	// that refuses every one), "" while it serves them: /readyz and
	// /healthz then report it not ready, so a balancer sends its calls
	// to another replica. It is called on every health request.
	Refusing func() string
	// ReadyTimeout bounds how long requests wait for Ready, counted from
	// New; 0 means as long as it takes. Below zero requests do not wait:
	// Ready only tells /readyz and /healthz.
	ReadyTimeout time.Duration
	// MaxConnections bounds the HTTP connections ServeListener serves at
	// once. A new connection past it closes the one that has waited
	// longest without a request (sent none yet, or idle between two), or
	// is refused with 503 when every connection serves a request. 0 means
	// DefaultMaxConnections.
	MaxConnections int
	// MaxConnsPerAddr bounds, the same way, the connections from one
	// client IP address; 0 means three quarters of MaxConnections.
	MaxConnsPerAddr int
	// MaxConnsPerIdentity bounds, the same way, the connections of one
	// authenticated identity: a connection counts against its address
	// until a request on it authenticates, then against that identity, so
	// clients behind one address are not capped together; a request past
	// the cap, when none of the identity's connections is idle, is refused
	// with 429. 0 means MaxConnsPerAddr.
	MaxConnsPerIdentity int
	// MaxStreams bounds the SSE GET streams open at once (more are
	// refused with 503), so they never take every connection; 0 means
	// half of MaxConnections.
	MaxStreams int
	// HeaderTimeout is how long an HTTP connection may take to send a
	// request's headers, from accept or its first byte, before it is
	// closed; 0 means DefaultHeaderTimeout.
	HeaderTimeout time.Duration
	// BodyTimeout is how long a request's body may take to arrive once its
	// headers are read; a slower one is refused (408) and its connection
	// closed, as is one that arrives slower than 1 KiB a second after its
	// first 2 s, whatever BodyTimeout is. 0 means DefaultBodyTimeout.
	BodyTimeout time.Duration
	// MaxSessions bounds the client sessions open at once: a new session
	// past it closes the one idle longest, so thousands of clients that
	// never say goodbye cost bounded memory. 0 means DefaultMaxSessions.
	MaxSessions int
	// MaxCallsPerSession bounds the tools/call, prompts/get and
	// resources/read requests one client session has in flight; past it a call is refused at once with a JSON-RPC
	// error, so a flood costs neither goroutines nor memory. 0 means
	// DefaultMaxCallsPerSession.
	MaxCallsPerSession int
	// MaxBatchResponse bounds the bytes of the answer to one JSON-RPC
	// batch over HTTP; past it the answer ends and its connection closes.
	// 0 means DefaultMaxBatchResponse.
	MaxBatchResponse int
	// MaxCalls bounds the tools/call, prompts/get and resources/read
	// requests in flight on the whole gateway, whatever their sessions; past it a call is refused at once
	// with a JSON-RPC error, never queued. 0 means DefaultMaxCalls. One
	// identity (one address, without identities) holds at most three
	// quarters of them, so that it cannot keep the others out.
	MaxCalls int
	// RawNames serves each tool under its server's own name
	// (tool.Origin.Name) instead of its public name: for a gateway in front
	// of one server, or clients that expect a server's own names. A raw
	// name offered by two servers is served from the first in ServerOrder;
	// the other is not served, and the log says why.
	RawNames bool
	// ServerOrder returns the servers in precedence order (the config's
	// order) for RawNames; servers it does not list come after, by name.
	// It is called on every sync of the tool list.
	ServerOrder func() []string
	// InsecureAllowNonLoopback lets Listen bind a non-loopback address
	// without a BearerToken, exposing every tool to the network
	// unauthenticated. Named loudly on purpose.
	InsecureAllowNonLoopback bool

	// Stateless serves Streamable HTTP without sessions (the go-sdk's
	// stateless mode): every POST is served on its own, so any replica
	// behind a plain round-robin balancer can answer any request. Clients
	// of protocol 2026-07-28 lose nothing; older clients get no
	// notifications (no GET stream) and no server-to-client requests.
	// Without it, a 2026-07-28 request is served so all the same, and
	// older clients get sessions (servesStateless). A stdio or in-memory
	// session (ServeTransport) is a session either way.
	Stateless bool
	// ResumeGrace is how long the calls of an HTTP client whose request
	// stream dropped before the results keep running, waiting for the
	// client to resume the stream (protocol 2025-11-25 and older over
	// SSE); 0 means DefaultResumeGrace. Streams that cannot be resumed
	// (JSON responses, stateless mode, 2026-07-28) have their calls
	// cancelled at once.
	ResumeGrace time.Duration
	// QuestionWait is how long a call whose client is asked through
	// input-required results (protocol 2026-07-28) waits, parked, for the
	// client to call again with its answers before it is cancelled; 0
	// means DefaultQuestionWait. A Gate that is a QuestionWaiter overrides
	// it.
	QuestionWait time.Duration
	// Observer, when set, is told of requests and tool calls, for
	// metrics; nil observes nothing.
	Observer Observer
	// Metrics, when set, is served at /metrics behind the same checks as
	// /healthz (for a Prometheus scrape).
	Metrics http.Handler
	// CallContext, when set, derives the context each tools/call runs in
	// from the request's _meta: a W3C trace context the client sent
	// ("traceparent") continues through the gateway to the backend. nil
	// leaves the context as it is. It must keep ctx's cancellation.
	CallContext func(ctx context.Context, meta map[string]any) context.Context

	// NewView, when set, is called once per client session for its own
	// view of the catalog (deferred loading: see View); a nil View, or a
	// nil NewView, lists every tool to the session.
	NewView func() View
	// Gate, when set, is consulted on every tools/call before it runs
	// (who is calling, may they, record it); nil lets every call through.
	Gate Gate

	// ConfigDigest, when set, returns the digest of the config this
	// replica applies ("" while there is none). With a store shared by
	// replicas (SharedSessions) each replica records it at every
	// renewal, and /healthz warns while the live replicas do not all
	// apply the same config (configdrift.go).
	ConfigDigest func() string

	// idleTimeout replaces sessionTimeout when set (tests that end a
	// session by its idle timeout).
	idleTimeout time.Duration
	// renewEvery replaces ownerTTL/3, how often a replica renews its
	// records, when set (tests that change a replica's config).
	renewEvery time.Duration
}

// Observer is told what the gateway serves (Options.Observer), for
// metrics. Its methods run on the request's goroutine: they must be quick,
// safe for concurrent use, and must not call the Gateway.
type Observer interface {
	// Request is called as each MCP request of a client (its JSON-RPC
	// method; notifications are not requests) reaches the gateway.
	Request(method string)
	// CallStarted is called as a tools/call of the registry tool name is
	// handed to Registry.Execute. The function it returns is called once
	// when the call ends, with its result; cancelled reports that the
	// call's context ended first (the client cancelled, its session
	// closed, or the gateway shut down).
	CallStarted(name string) (ended func(res tool.Result, cancelled bool))
}

// Gateway is an MCP server whose tools are a registry's tools. Create it with
// New and stop it with Close; every method is safe for concurrent use.
//
// Results of tools/call, mapped from the registry's Result (every call goes
// through Registry.Execute):
//
//   - a tool whose source has a wire result (an MCP backend's, Result.Wire):
//     that result's content blocks as received (each block's bytes, unknown
//     fields included) and its structuredContent (numbers keep their
//     digits), isError kept;
//   - any other tool (one written in Go): its text Content, plus its Value
//     as structuredContent when that is a JSON object;
//   - any other failure (backend down, timeout, invalid output, a Go tool's
//     error, a cancelled call): an isError result with the registry's text
//     "Error: <message>"; a call the gateway itself cancelled says why;
//   - an unknown tool: JSON-RPC error -32602 `unknown tool "<name>"`, as the
//     MCP spec and the SDK have it for names the server does not list.
//
// A content block the go-sdk's typed Content cannot decode (an unknown type,
// a bare number, a text that is not a string, undecodable base64) is
// replaced by a text block holding the bridge's projection of it (the
// upstream diagnostic, such as "[unsupported MCP content type: video]"),
// because SDK clients reject a whole result for one such block: the other
// blocks and the call survive. The original stays available to programmatic
// callers of the registry (Result.Wire).
type Gateway struct {
	reg    *tool.Registry
	opts   Options
	log    *slog.Logger
	server *mcp.Server
	// engine serves the MCP endpoint: the gateway's own Streamable HTTP
	// transport (transport.go), or a design of the spike (engine.go).
	engine  http.Handler
	timeout time.Duration
	parked  parkedCalls // calls waiting for their clients' answers
	ends    sessionEnds // closed when client sessions end, for share: session

	closeOnce sync.Once
	closeErr  error
	done      chan struct{} // closed by Close

	mu     sync.Mutex
	closed bool                   // guarded by mu
	calls  map[*inflight]struct{} // calls in flight; guarded by mu
	// onStream counts the calls in flight by the HTTP request stream
	// they arrived on (inflight.stream, "" not counted); guarded by mu.
	onStream map[string]int
	// sessions are the client sessions served with state, each one value
	// (session.go); guarded by mu.
	sessions map[*mcp.ServerSession]*sessionState
	// byID indexes sessions by id (sessionByID); guarded by mu.
	byID map[string]*sessionState
	// watching owns the goroutines that end sessions (openLocked,
	// sessionEnds); Close waits for them.
	watching sync.WaitGroup
	// shares counts the tools/call requests in flight of callers without
	// a session's state (share: a stateless extension task's caller, a
	// one-request session); guarded by mu.
	shares   map[share]int
	inFlight int // the calls in flight, whatever their share
	// held counts the calls in flight by share.holder; guarded by mu.
	held map[holder]int
	// subscribers holds, for each session subscribed to resources while
	// a Screen decides, what its caller may see, by subscribed URI: its
	// updates are screened as they are sent (mayUpdate); guarded by mu.
	subscribers map[*mcp.ServerSession]map[string]func(Offer, string) bool
	// asks counts the backends' requests waiting for the answer of each
	// session without state (one-request sessions); guarded by mu.
	asks map[*mcp.ServerSession]int
	// answering counts the tools/call requests read on stdio-like
	// sessions and the HTTP POSTs that have not been answered yet.
	answering pending
	// vanish follows HTTP request streams dropped mid-call.
	vanish vanishing
	// owners binds HTTP sessions to the identity that opened them.
	owners sessionOwners

	readyBy time.Time // New + Options.ReadyTimeout

	syncMu        sync.Mutex
	advertised    map[string]advertisement // what the server lists, by served name; guarded by syncMu
	shadowed      map[shadowed]bool        // raw names not served; guarded by syncMu
	unsafeRaw     map[string]bool          // public names served for unsafe raw ones; guarded by syncMu
	offers        offerState               // resources, templates and prompts served; guarded by syncMu
	syncedVersion atomic.Uint64            // the registry version the last sync read
	stopWatch     func()
	syncDone      chan struct{} // closed when the watch goroutine returned

	views viewState // the client sessions' views (Options.NewView)

	ownerBook ownerTaskBook   // the tasks of stateless mode's identities (taskext.go)
	replicas  replicaSessions // sessions' owners shared with other replicas (replicas.go)
	configs   replicaConfigs  // the configs the replicas apply (configdrift.go)
	// ownerChecks shares the liveness checks of the replicas forwards
	// reach (ownerwatch.go).
	ownerChecks ownerChecks

	updates     *updateQueue       // resource updates to send (sendUpdates)
	endUpdates  context.CancelFunc // stops sendUpdates
	updatesDone chan struct{}      // closed when sendUpdates returned
	evicting    sync.WaitGroup     // sessions evictIdle is closing

	// events is the SDK's event store of HTTP streams, nil when stateless.
	events mcp.EventStore

	// callable is what tools/call serves: served name → registry name.
	callable atomic.Pointer[map[string]string]
	gate     Gate // Options.Gate, or openGate

	// taskTools are the served names listed as supporting tasks.
	taskTools atomic.Pointer[map[string]bool]
	// serverTaskTools are those of taskTools whose backend decides per
	// call whether it becomes a task (tool.Tool.ServerTasks): their
	// calls are relayed round by round (taskrelay.go).
	serverTaskTools atomic.Pointer[map[string]bool]
	// headerSchemas are the input schemas of the served tools that may
	// carry x-mcp-header annotations, by served name: the transport checks
	// a 2026-07-28 call's Mcp-Param-* headers against them before any
	// path serves it (mcpHeadersOK).
	headerSchemas atomic.Pointer[map[string]json.RawMessage]
	// serverInfo is the server's Implementation as a 2026-07-28 result's
	// _meta names it.
	serverInfo json.RawMessage
}

// inflight is one tools/call (or subscriptions/listen stream) being
// served, so Close and a session's end can cancel it.
type inflight struct {
	session *mcp.ServerSession
	cancel  context.CancelCauseFunc
	// stream is the HTTP request stream waiting for the result, "" when
	// not over HTTP (see serveMCP).
	stream string
}

// advertisement is what the server lists for one registry tool, to tell a
// changed definition from one that stayed. ok is false when the tool could
// not be advertised (it is then not listed, and not retried until its
// definition changes).
type advertisement struct {
	public, title, description, input, output, annotations string
	icons                                                  string // iconsKey
	meta                                                   string
	background                                             bool // listed as supporting tasks
	serverTasks                                            bool // its backend decides about tasks (tool.Tool.ServerTasks)
	ok                                                     bool
}

// same reports whether b advertises what a does.
func (a advertisement) same(b advertisement) bool {
	a.ok, b.ok = false, false
	return a == b
}

// New returns a Gateway serving reg's tools. It lists the current tools at
// once and starts a goroutine that follows the registry's changes until
// Close. reg must not be nil.
func New(reg *tool.Registry, opts Options) *Gateway {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	impl := &mcp.Implementation{Name: "mcpbridge", Version: buildinfo.Version}
	if opts.Implementation != nil {
		copied := *opts.Implementation
		impl = &copied
	}
	timeout := opts.ShutdownTimeout
	if timeout <= 0 {
		timeout = DefaultShutdownTimeout
	}
	opts.AllowedOrigins = append([]string(nil), opts.AllowedOrigins...)
	g := &Gateway{
		reg:         reg,
		opts:        opts,
		serverInfo:  serverwire.ServerInfoJSON(impl),
		log:         log.With("component", "gateway"), // the SDK server logs through log untagged
		timeout:     timeout,
		done:        make(chan struct{}),
		calls:       make(map[*inflight]struct{}),
		onStream:    make(map[string]int),
		sessions:    make(map[*mcp.ServerSession]*sessionState),
		byID:        make(map[string]*sessionState),
		shares:      make(map[share]int),
		held:        make(map[holder]int),
		subscribers: make(map[*mcp.ServerSession]map[string]func(Offer, string) bool),
		asks:        make(map[*mcp.ServerSession]int),
		advertised:  make(map[string]advertisement),
		syncDone:    make(chan struct{}),
		parked:      parkedCalls{tag: replicaTag()},
		readyBy:     time.Now().Add(opts.ReadyTimeout),
		gate:        opts.Gate,
		updates:     newUpdateQueue(),
		updatesDone: make(chan struct{}),
	}
	if g.gate == nil {
		g.gate = openGate{}
	}
	g.ends.g = g
	// The SDK's own lines per session at debug level (sdkwire.ServerLogger).
	sdkLog := slog.New(sdkwire.ServerLogger(log.Handler()))
	g.server = mcp.NewServer(impl, &mcp.ServerOptions{
		Logger:   sdkLog,
		PageSize: opts.PageSize,
		// Tools always; resources, prompts and completion are set per
		// session as the backends offer them (see capabilities).
		Capabilities:       &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		CompletionHandler:  g.complete,
		SubscribeHandler:   g.subscribe,
		UnsubscribeHandler: g.unsubscribe,
		SetCacheable:       setCacheable,
	})
	g.server.AddReceivingMiddleware(g.viewMiddleware) // innermost: runs after g.middleware
	g.server.AddReceivingMiddleware(g.screenMiddleware)
	g.server.AddReceivingMiddleware(g.middleware)
	g.server.AddSendingMiddleware(g.sendingMiddleware)
	idle := cmp.Or(opts.idleTimeout, sessionTimeout)
	httpOpts := httpOptions(sdkLog, opts.Stateless, idle)
	g.events = httpOpts.EventStore
	g.engine = spikeEngine(g)

	// Watch before the first sync, so no change falls in between.
	changed, stop := reg.Watch()
	g.stopWatch = stop
	g.sync()
	go g.follow(changed)
	updatesCtx, endUpdates := context.WithCancel(context.Background())
	g.endUpdates = endUpdates
	go g.sendUpdates(updatesCtx)
	if opts.ConfigDigest != nil {
		// Its config is recorded from the start, not from its first
		// request as its sessions are.
		g.replicas.mu.Lock()
		g.renewingLocked()
		g.replicas.mu.Unlock()
	}
	return g
}

// httpOptions are the Streamable HTTP handler's options.
func httpOptions(sdkLog *slog.Logger, stateless bool, idle time.Duration) *mcp.StreamableHTTPOptions {
	o := &mcp.StreamableHTTPOptions{
		Logger: sdkLog,
		// Clients that vanish without a DELETE do not pile up sessions
		// (and list_changed fan-out) for the life of the gateway.
		SessionTimeout: idle,
		Stateless:      stateless,
		// A 2026-07-28 request lives as long as its POST: a client that
		// leaves has its calls cancelled (older ones: see serveMCP).
		PropagateRequestCancellation: true,
	}
	if !stateless {
		// Resumable SSE streams (bounded per session, see eventStore): a
		// client whose stream drops mid-call reconnects and still gets its
		// result. Stateless streams end with their request: nothing to
		// resume.
		o.EventStore = newEventStore()
	}
	return o
}

// follow re-syncs after every registry change until Close. The registry
// coalesces a burst into one wake-up.
func (g *Gateway) follow(changed <-chan struct{}) {
	defer close(g.syncDone)
	for {
		select {
		case <-changed:
			g.sync()
			g.moveSubscriptions()
		case <-g.done:
			return
		}
	}
}

// sync makes the server's tool set equal the registry's by a diff: a tool
// whose definition stayed is left alone (never removed and re-added, so a
// client listing meanwhile never misses it), a changed one is replaced in
// place, a gone one removed. Each change makes the SDK (re)arm its debounce
// timer, so a whole sync ends in one list_changed per session.
func (g *Gateway) sync() {
	g.syncMu.Lock()
	defer g.syncMu.Unlock()
	// Before and after its changes: their list_changed is owed to every
	// session with a view (viewState.epoch).
	g.views.epoch.Add(1)
	defer g.views.epoch.Add(1)
	version := g.reg.Version()
	tools := g.reg.List()
	defer g.syncedVersion.Store(version)
	var order []string
	if g.opts.ServerOrder != nil {
		order = g.opts.ServerOrder()
	}
	g.syncOffers(order, tools)
	served, lost := listings(tools, g.opts.RawNames, order)
	g.reportShadowed(lost)
	g.reportUnsafeRaw(served)
	present := make(map[string]bool, len(served))
	for _, l := range served {
		present[l.served] = true
		t := l.tool
		ad := advertisement{public: t.Name, title: t.Title, description: t.Description,
			input: string(t.InputSchema), output: string(t.OutputSchema), annotations: string(t.Annotations), icons: iconsKey(t.Icons),
			meta: string(t.Meta), background: t.Background, serverTasks: t.ServerTasks}
		old, known := g.advertised[l.served]
		if known && old.same(ad) {
			continue
		}
		err := g.addTool(l.served, t)
		ad.ok = err == nil
		if err != nil {
			g.log.Warn("tool not served", "tool", l.served, "err", err)
			if known && old.ok {
				g.server.RemoveTools(l.served)
			}
		}
		g.advertised[l.served] = ad
	}
	var gone []string
	for name, ad := range g.advertised {
		if !present[name] {
			delete(g.advertised, name)
			if ad.ok {
				gone = append(gone, name)
			}
		}
	}
	if len(gone) > 0 {
		g.server.RemoveTools(gone...)
	}
	g.publishCallable()
}

// reportShadowed logs each raw name not served because another server
// took it, once per change of the set. syncMu must be held.
func (g *Gateway) reportShadowed(lost []shadowed) {
	now := make(map[shadowed]bool, len(lost))
	for _, s := range lost {
		now[s] = true
		if !g.shadowed[s] {
			g.log.Warn("tool not served: another server offers the same raw name and comes first in the config",
				"tool", s.tool, "server", s.server, "served_from", s.keptBy)
		}
	}
	g.shadowed = now
}

// reportUnsafeRaw logs, once each, the tools served under their public
// names because their raw names are not safe to show.
func (g *Gateway) reportUnsafeRaw(served []listing) {
	now := make(map[string]bool)
	for _, l := range served {
		if l.unsafeRaw == "" {
			continue
		}
		now[l.served] = true
		if !g.unsafeRaw[l.served] {
			g.log.Warn("tool served under its public name: its raw name has characters other than A-Z, a-z, 0-9, _, . and -",
				"tool", l.served, "raw_name", strconv.QuoteToASCII(l.unsafeRaw))
		}
	}
	g.unsafeRaw = now
}

// addTool lists t on the server, or replaces its listing.
func (g *Gateway) addTool(served string, t tool.Tool) (err error) {
	in, err := inputSchema(t.InputSchema)
	if err != nil {
		return err
	}
	mt := &mcp.Tool{Name: served, Title: t.Title, Description: t.Description, InputSchema: in}
	var a mcp.ToolAnnotations // hints a client may use; malformed ones are only hints lost
	if len(t.Annotations) > 0 && json.Unmarshal(t.Annotations, &a) == nil {
		mt.Annotations = &a
	}
	if out := bytes.TrimSpace(t.OutputSchema); len(out) > 0 && string(out) != "null" {
		mt.OutputSchema = json.RawMessage(t.OutputSchema)
	}
	mt.Icons = mcpIcons(t.Icons)
	mt.Meta = mcpMeta(t.Meta)
	// The SDK validates a tool by panicking (for example on an x-mcp-header
	// annotation it rejects) before it takes any lock; one bad backend
	// schema must not take the gateway down.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the MCP SDK refused its definition: %v", r)
		}
	}()
	g.server.AddTool(mt, g.handleCall)
	return nil
}

// mcpMeta is a tool's _meta for the SDK; nil for none or not an object.
// Numbers stay json.Number so that they are sent back as written.
func mcpMeta(raw json.RawMessage) mcp.Meta {
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m mcp.Meta
	if dec.Decode(&m) != nil {
		return nil
	}
	return m
}

// inputSchema returns the schema to advertise for a registry input schema:
// the bytes untouched when they are an object schema, {"type":"object"} for
// none (a tool that takes anything), and the object with "type":"object"
// added in front when it has no type (MCP requires an object schema; the
// SDK refuses anything else).
func inputSchema(s json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(s)
	if len(trimmed) == 0 {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &members); err != nil || members == nil {
		return nil, fmt.Errorf("its input schema is not a JSON object: %.100s", trimmed)
	}
	typ, ok := members["type"]
	if !ok {
		rest := bytes.TrimSpace(trimmed[1:])
		out := []byte(`{"type":"object"`)
		if rest[0] != '}' {
			out = append(out, ',')
		}
		return append(out, rest...), nil
	}
	var name string
	if err := json.Unmarshal(typ, &name); err != nil || name != "object" {
		return nil, fmt.Errorf(`its input schema has type %s, but MCP requires "object"`, typ)
	}
	return s, nil
}

// track registers a call so Close and the end of its session can cancel
// it; an error (errClosing, errSessionClosed) says why it must not start.
func (g *Gateway) track(c *inflight) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch st := g.stateLocked(c.session); {
	case g.closed:
		return errClosing
	case st != nil && st.closing:
		return errSessionClosed
	}
	g.calls[c] = struct{}{}
	if c.stream != "" {
		g.onStream[c.stream]++
	}
	return nil
}

// admitCall takes one of the call slots of s (a session's, or a caller's:
// see share), or says why not: s has MaxCallsPerSession calls in flight
// already, or the gateway MaxCalls. A call without a session but its
// request (ofSession false) takes a slot of the gateway's only: its
// request has one call, well within a session's cap, as the one-request
// session the SDK's path gives it.
func (g *Gateway) admitCall(s share, ofSession bool) error {
	perSession := cmp.Or(g.opts.MaxCallsPerSession, DefaultMaxCallsPerSession)
	total := cmp.Or(g.opts.MaxCalls, DefaultMaxCalls)
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.stateLocked(s.session)
	var n int
	if st != nil {
		n = st.calls
	} else if ofSession {
		n = g.shares[s]
	}
	switch {
	case ofSession && n >= perSession:
		return tooManyCalls(s.where(), perSession)
	case g.inFlight >= total:
		return tooManyCalls("on the gateway", total)
	case g.held[s.holder] >= holderShare(total):
		return tooManyCalls(s.holderWhere(), holderShare(total))
	}
	g.held[s.holder]++
	switch {
	case !ofSession:
	case st != nil:
		st.calls++
	default:
		g.shares[s]++
	}
	g.inFlight++
	return nil
}

// holderShare is how many of the gateway's total calls in flight one
// holder may hold: three quarters, as one address may hold three
// quarters of the connections.
func holderShare(total int) int { return max(1, total-total/4) }

// holderWhere names s's holder in an error.
func (s share) holderWhere() string {
	if s.holder.identity != "" {
		return "for this identity"
	}
	return "from this address"
}

// where names s in an error.
func (s share) where() string {
	if s.session == nil {
		return "for this caller"
	}
	return "on this session"
}

// tooManyCalls is the JSON-RPC error refusing a call over a limit.
func tooManyCalls(where string, limit int) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("too many tool calls in flight %s (the gateway's limit is %d); retry when some have ended", where, limit)}
}

// releaseCall gives back a slot taken by admitCall.
func (g *Gateway) releaseCall(s share, ofSession bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inFlight--
	if g.held[s.holder]--; g.held[s.holder] <= 0 {
		delete(g.held, s.holder)
	}
	if !ofSession {
		return
	}
	if st := g.stateLocked(s.session); st != nil {
		st.calls--
		return
	}
	if g.shares[s]--; g.shares[s] <= 0 {
		delete(g.shares, s)
	}
}

func (g *Gateway) untrack(c *inflight) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.calls[c]; !ok {
		return
	}
	delete(g.calls, c)
	if c.stream != "" {
		if g.onStream[c.stream]--; g.onStream[c.stream] <= 0 {
			delete(g.onStream, c.stream)
		}
	}
}

// cancelCalls cancels the calls in flight of session (all sessions when
// session is nil) with cause, and refuses the session's new ones.
func (g *Gateway) cancelCalls(session *mcp.ServerSession, cause error) {
	g.mu.Lock()
	if st := g.stateLocked(session); st != nil {
		st.closing = true
	}
	g.mu.Unlock()
	g.cancelWhere(func(c *inflight) bool { return session == nil || c.session == session }, cause)
}

// cancelWhere cancels the calls in flight that match with cause and
// returns how many.
func (g *Gateway) cancelWhere(match func(*inflight) bool, cause error) int {
	g.mu.Lock()
	var cancels []context.CancelCauseFunc
	for c := range g.calls {
		if match(c) {
			cancels = append(cancels, c.cancel)
		}
	}
	g.mu.Unlock()
	for _, cancel := range cancels {
		cancel(cause)
	}
	return len(cancels)
}

func (g *Gateway) isClosed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed
}

// Close shuts the gateway down: it stops following the registry, cancels
// every call in flight, waits until each of those calls has been answered
// on the wire (an isError result saying the gateway is shutting down), and
// then closes every session over every transport; all of it within
// Options.ShutdownTimeout. It then cancels the gateway's resource
// subscriptions, each backend told at once (best effort, bounded by the
// registry). It is idempotent and returns the first call's result: an
// error says what did not finish in time (a tool that ignores
// cancellation), which is then left to end on its own.
func (g *Gateway) Close() error {
	g.closeOnce.Do(func() {
		deadline := time.Now().Add(g.timeout)
		g.mu.Lock()
		g.closed = true
		g.answering.close() // Handler refuses requests from now on
		tasks := g.heldTasksLocked()
		g.mu.Unlock()
		g.handOverTasks() // before anything cancels them
		close(g.done)
		g.ends.close()
		g.stopWatch()
		<-g.syncDone
		g.cancelCalls(nil, errClosing)
		tasksClosed := make(chan struct{})
		go func() { g.closeTasks(tasks, deadline); close(tasksClosed) }()
		g.parked.close()
		g.vanish.stop()
		// A session's Close drops the replies it has not written yet, so
		// the answers to the cancelled calls go out first.
		answered := g.unanswered(g.answering.wait(deadline))
		var sessions []*mcp.ServerSession
		for ss := range g.server.Sessions() {
			sessions = append(sessions, ss)
		}
		g.closeErr = errors.Join(answered, g.closeSessions(sessions, deadline), g.evicted(deadline), g.parked.wait(deadline), g.watchersDone(deadline))
		<-tasksClosed
		g.ownerBook.wg.Wait() // each bounded by the shutdown timeout
		g.replicas.stop()
		g.endUpdates()
		<-g.updatesDone
		g.dropSubscriptions()
	})
	return g.closeErr
}

// unanswered reports calls left unanswered at the shutdown deadline.
func (g *Gateway) unanswered(left int) error {
	if left == 0 {
		return nil
	}
	return fmt.Errorf("gateway: %d call(s) still unanswered when the shutdown timeout (%v) passed: a tool ignores cancellation", left, g.timeout)
}

// closeSessions closes sessions concurrently and waits for them until
// deadline.
func (g *Gateway) closeSessions(sessions []*mcp.ServerSession, deadline time.Time) error {
	if len(sessions) == 0 {
		return nil
	}
	closed := make(chan struct{}, len(sessions))
	for _, ss := range sessions {
		go func() {
			ss.Close()
			closed <- struct{}{}
		}()
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for left := len(sessions); left > 0; left-- {
		select {
		case <-closed:
		case <-timer.C:
			return fmt.Errorf("gateway: %d of %d sessions did not close within the shutdown timeout (%v)", left, len(sessions), g.timeout)
		}
	}
	return nil
}

// ServeTransport serves one client session over t, any go-sdk transport
// (for example one of mcp.NewInMemoryTransports, for an in-process client),
// until the client leaves, ctx is done or the Gateway is closed. When ctx
// ends first, the session's calls in flight are cancelled and answered (an
// isError result saying the session is closing) before the session is
// closed, all within Options.ShutdownTimeout. It returns nil once the
// session is over, however the client left; ErrClosed when the Gateway was
// closed before the session started; an error when the session could not
// start or did not close in time.
func (g *Gateway) ServeTransport(ctx context.Context, t mcp.Transport) error {
	return g.serveTransport(ctx, t, g.take)
}

// afterConnect is take, deciding only once connected is closed: the SDK
// reads the first request before Connect returns the session it is of,
// and a request decided without it would go to the SDK, answered
// otherwise than the same request a moment later.
func afterConnect(connected <-chan struct{}, take func(*jsonrpc.Request) sdkwire.TakenCall) func(*jsonrpc.Request) sdkwire.TakenCall {
	return func(req *jsonrpc.Request) sdkwire.TakenCall {
		<-connected
		return take(req)
	}
}

// serveTransport is ServeTransport with the take (nil: every
// request goes through the SDK's session, as tests comparing the paths
// want).
func (g *Gateway) serveTransport(ctx context.Context, t mcp.Transport, take func(*atomic.Pointer[mcp.ServerSession]) func(*jsonrpc.Request) sdkwire.TakenCall) error {
	if g.isClosed() {
		return ErrClosed
	}
	var unanswered pending // the session's tools/call requests, also counted in g.answering
	tt := &trackedTransport{Transport: t, Method: "tools/call", Count: func(delta int) {
		if delta > 0 {
			unanswered.add()
			g.answering.add()
			return
		}
		unanswered.done()
		g.answering.done()
	}}
	ctx = context.WithValue(ctx, statelessKey{}, false) // one client's session, stateless mode or not
	var session atomic.Pointer[mcp.ServerSession]
	connected := make(chan struct{}) // closed once session is stored, or Connect failed
	taking := &sdkwire.TakingTransport{Transport: &sdkwire.ServerCapabilityTransport{Transport: tt, Add: taskCapability}, Take: noTake}
	if take != nil {
		taking.Take = take(&session)
	}
	taking.Take = afterConnect(connected, g.takeTasks(&session, g.takeSkills(&session, taking.Take)))
	ss, err := g.server.Connect(ctx, taking, nil)
	if err != nil {
		close(connected)
		return fmt.Errorf("gateway: connecting a client session: %w", err)
	}
	session.Store(ss)
	// Kept from the start, stateless mode or not: a stdio-like session
	// is one client's for as long as it lasts.
	g.mu.Lock()
	st := g.keepLocked(ss)
	g.mu.Unlock()
	close(connected)
	// Close snapshots the sessions after marking itself closed: a session
	// kept before the mark (st) was connected before it too, so Close
	// closes it and its end is waited for below; one kept after it (nil)
	// may have missed the snapshot and is closed here. Not a second look
	// at the mark: a session served before Close would read as never
	// started (ErrClosed).
	if st == nil { // untested: needs Close to run between Connect and the keep
		g.closeSessions([]*mcp.ServerSession{ss}, time.Now().Add(g.timeout))
		return ErrClosed
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case err := <-ended:
		// However the client left (EOF, a closed pipe after a write), its
		// session is over and nothing is left to do: not a serve failure.
		if err != nil {
			g.log.Debug("client session ended", "err", err)
		}
		deadline := time.Now().Add(g.timeout)
		return errors.Join(g.sessionGone(st), g.stillRunning(taking, deadline))
	case <-ctx.Done():
		deadline := time.Now().Add(g.timeout)
		g.cancelCalls(ss, errSessionClosed)
		err := errors.Join(g.unanswered(unanswered.wait(deadline)), g.closeSessions([]*mcp.ServerSession{ss}, deadline))
		if err != nil {
			return err // its tasks end with it (end), in time or not
		}
		<-ended
		return errors.Join(g.sessionGone(st), g.stillRunning(taking, deadline))
	}
}

// sessionGone waits until end let go of the stdio-like session of st, its
// tasks included (each bounded by the shutdown timeout), and reports
// tasks that outlived it.
func (g *Gateway) sessionGone(st *sessionState) error {
	<-st.gone
	return st.tasksErr
}
