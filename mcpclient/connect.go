package mcpclient

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/childproc"
	"github.com/mcpbridge/mcpbridge/internal/errtext"
	"github.com/mcpbridge/mcpbridge/internal/oauth"
	"github.com/mcpbridge/mcpbridge/internal/redact"
	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/internal/tasks"
)

// generation is one connection attempt: a fresh transport, client and
// session (docs/upstream.md §3.4). A client is never reused across attempts.
type generation struct {
	session  *mcp.ClientSession
	child    *childproc.Transport // stdio only
	stderr   *stderrTail          // the child's last stderr lines; stdio only
	table    *captureTable
	drops    *sdkwire.ToolDrops // why the SDK dropped tools from tools/list
	progress progressRoutes
	resync   chan struct{} // list_changed arrived (buffer 1: pending re-syncs coalesce)
	dirty    atomic.Uint32 // the listKinds changed since the last re-sync
	pages    listedPages   // raw tools/list pages by cursor; supervisor goroutine only

	// The server's tasks the bridge runs (servedtasks.go); nil when it
	// offers none.
	served *tasks.Store
	taking *sdkwire.TakingTransport

	// ctx is cancelled when the generation ends, which aborts its calls
	// (stop ends calls with it).
	ctx    context.Context
	cancel context.CancelCauseFunc
	calls  *callBook // the tools/calls in flight: toolCallTimeoutMs and the end

	done    chan struct{} // closed when the session ended
	endOnce sync.Once
	err     error // why the session ended; read after done

	// shown rewrites an error for display (Config.shownHost); nil: as is.
	shown func(error) error

	closeOnce sync.Once
}

func (g *generation) ended() bool {
	select {
	case <-g.done:
		return true
	default:
		return false
	}
}

func (g *generation) endErr() error {
	<-g.done
	return g.err
}

// process is the stdio child of this generation, if it started one.
func (g *generation) process() *childproc.Process {
	if g.child == nil {
		return nil
	}
	return g.child.Process()
}

// requestResync asks for a re-sync of the lists of kinds; pending
// requests coalesce.
func (g *generation) requestResync(kinds listKind) {
	g.dirty.Or(uint32(kinds))
	select {
	case g.resync <- struct{}{}:
	default:
	}
}

// failed returns err, why the generation failed or ended, with what its
// stdio child said about it: its exit status when the connection saw
// less, what the sandbox denied it, and the last lines of its stderr
// (complete once the child is gone; while it runs, those so far).
func (g *generation) failed(err error) error {
	p := g.process()
	if p == nil || err == nil || hasStderr(err) {
		return err
	}
	select {
	case <-p.Exited():
		// Close is instant now, and reports the exit unless the
		// shutdown ladder's own signal caused it.
		err = withExit(err, p.Close())
	default:
	}
	return g.stderr.annotate(g.sandboxDenied(err))
}

// errServerClosed is why a session ended that the server closed without
// an error of its own.
var errServerClosed = errors.New("server closed the connection")

// end records why the session ended; the first reason wins.
func (g *generation) end(err error) {
	g.endOnce.Do(func() {
		if err == nil {
			err = errServerClosed
		}
		g.err = redact.Error(err)
		if g.shown != nil {
			g.err = g.shown(g.err)
		}
		g.stop(err)
		close(g.done)
	})
}

// stop cancels ctx with cause and, before returning, the calls in flight
// with ctx's cause (the first one given): by the time the session is
// closed or done, each call knows why it ended.
func (g *generation) stop(cause error) {
	g.cancel(cause)
	g.calls.end(context.Cause(g.ctx))
}

// close shuts the session down: calls in flight are cancelled first, since
// the SDK's Close waits for them.
func (g *generation) close() {
	g.closeOnce.Do(func() {
		// The SDK sends the notifications/cancelled of calls that ended by
		// their context on goroutines of its own; closing first could lose
		// them (a one-shot call interrupted, then its process ending).
		g.table.FlushCancels(cancelFlushBound)
		g.stop(errServerClosing)
		if g.session != nil {
			g.session.Close()
		}
		if g.served != nil {
			g.served.Close()
			g.taking.Wait()
		}
	})
}

var errServerClosing = errors.New("server connection is closing")

// cancelFlushBound bounds how long closing a connection waits for the
// notifications/cancelled of calls that ended by their context to be
// written.
const cancelFlushBound = 500 * time.Millisecond

// errGenerationStuck stops the supervisor: a generation would not close, and
// starting another could leave two processes of one server running.
var errGenerationStuck = errors.New("the previous connection would not close")

// attempt makes one connection attempt: connect, then the startup sync.
// It returns the established generation, or the reason it failed (with the
// failed generation already closed).
func (s *Server) attempt(first bool) (*generation, error) {
	deadline := time.Now().Add(s.cfg.StartupTimeout)
	if first {
		deadline = s.firstDeadline
	}
	ctx, cancel := context.WithDeadline(s.ctx, deadline)
	defer cancel()

	start := time.Now()
	if first {
		s.stepFirst("connecting")
	}
	connectCtx, end := s.trace(ctx, OpConnect, "")
	gen, err := s.connect(connectCtx)
	end(err)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded && s.ctx.Err() == nil {
			err = s.timedOut("connecting", err)
		}
		return nil, s.cfg.shownHost(s.cfg.refused(err))
	}
	connected := time.Now()
	if first {
		s.stepFirst("tool discovery")
	}

	// A list_changed that arrives from here on leaves a token in
	// gen.resync, so it gets its own re-sync after this startup sync; it is
	// never merged into it (docs/decisions.md §4), and strict startup keeps its
	// meaning.
	if err := s.syncCtx(ctx, gen, first && s.cfg.FailOnStartupError, allKinds); err != nil {
		if ctx.Err() == context.DeadlineExceeded && s.ctx.Err() == nil {
			err = s.timedOut("tool discovery", err)
		}
		if !s.closeGeneration(gen) {
			return nil, s.cfg.shownHost(fmt.Errorf("%w: %w", errGenerationStuck, err))
		}
		return nil, s.cfg.shownHost(gen.failed(err))
	}
	init := gen.session.InitializeResult()
	s.mu.Lock()
	s.cur = gen
	s.status.State = StateReady
	s.status.Err = ""
	s.firstStep = ""
	if s.conflict != "" {
		// Connected, but the tools could not be registered (docs/decisions.md §8:
		// never silent).
		s.status.State = StateFailed
		s.status.Err = s.conflict
	}
	s.status.Attempt = 0
	if p := gen.process(); p != nil {
		s.status.PID = p.PID()
		s.status.Sandbox = sandboxStatus(p.Sandbox())
	}
	s.status.Connect = connected.Sub(start)
	s.status.Discover = time.Since(connected)
	if init != nil {
		if init.ServerInfo != nil {
			s.status.PeerName, s.status.PeerVersion = init.ServerInfo.Name, init.ServerInfo.Version
		}
		s.status.ProtocolVersion = init.ProtocolVersion
	}
	s.mu.Unlock()
	s.resubscribe(ctx, gen)
	s.setLogLevel(ctx, gen)
	return gen, nil
}

// stepFirst records the step the first attempt is at, for Status to word
// a timeout not yet recorded; the attempt's outcome clears it as it
// records itself (attempt's Ready, setDown).
func (s *Server) stepFirst(step string) {
	s.mu.Lock()
	s.firstStep = step
	s.mu.Unlock()
}

// startupTimeout is an attempt's failure for want of an answer within
// startupTimeoutMs, in step; err is what the step returned; hint, when
// set, how to get past it.
type startupTimeout struct {
	step  string
	limit time.Duration
	err   error
	hint  string
}

func (e *startupTimeout) Error() string {
	msg := fmt.Sprintf("%s: no answer within startupTimeoutMs (%dms)", e.step, e.limit.Milliseconds())
	if e.hint != "" {
		msg += ": " + e.hint
	}
	return msg
}

// timedOut is the startupTimeout of s in step; err is what it returned.
func (s *Server) timedOut(step string, err error) *startupTimeout {
	return &startupTimeout{step: step, limit: s.cfg.StartupTimeout, err: err, hint: s.cfg.timeoutHint()}
}

// timeoutHint is how to get past a stdio server's startup timeout: the
// two causes are a slow start and a command that never speaks MCP, which
// running it by hand tells apart. The command is named as written, so
// that no secret a variable holds is shown.
func (c Config) timeoutHint() string {
	if c.Transport != TransportStdio {
		return ""
	}
	cmd := cmp.Or(c.Written.Command, c.Command)
	return "if the server is slow to start, raise startupTimeoutMs in its entry; else run its command (" + cmd + ") by hand to see whether it starts and answers on stdout"
}

func (e *startupTimeout) Unwrap() error { return e.err }

// Is makes the failure a deadline, whatever the step returned.
func (e *startupTimeout) Is(target error) bool { return target == context.DeadlineExceeded }

// refused is err, a failure to connect, with what a refused connection
// means said: nothing listens at the URL's address.
func (c Config) refused(err error) error {
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return err
	}
	u, perr := url.Parse(c.URL)
	if perr != nil || u.Hostname() == "" {
		return err
	}
	port := u.Port()
	switch {
	case port != "":
	case u.Scheme == "https":
		port = "443"
	default:
		port = "80"
	}
	addr := net.JoinHostPort(u.Hostname(), port)
	return errtext.Map(err, func(s string) string {
		return s + ": nothing is listening at " + addr + ": start the server, or correct its URL"
	})
}

// connect builds a fresh transport and client and performs the MCP
// handshake.
func (s *Server) connect(ctx context.Context) (*generation, error) {
	limit := s.opts.MaxResultBytes
	if limit < 0 {
		limit = 0
	}
	gen := &generation{
		table:  newCaptureTable(limit),
		drops:  &sdkwire.ToolDrops{},
		resync: make(chan struct{}, 1),
		done:   make(chan struct{}),
		shown:  s.cfg.shownHost,
	}
	gen.ctx, gen.cancel = context.WithCancelCause(context.Background())
	gen.calls = newCallBook(s.cfg.ToolCallTimeout)
	// Progress is queued for its call as the connection reads it, before
	// the response, and the call returns once its queue is handed over.
	gen.table.OnRequest(s.sent.note)
	gen.table.OnRelatedRequest(s.related.note)
	gen.table.OnNotification(func(method string, params json.RawMessage) {
		gen.progress.notified(method, params)
		if method == "notifications/message" {
			s.logged(params) // at read time too: a call's log lines come before its result
		}
	})
	// The bridge sets no SDK handler for these two: the SDK need not queue
	// them (a server flooding them grew its queue without bound).
	gen.table.Consume("notifications/message", "notifications/progress")

	transport, err := s.transport(gen)
	if err != nil {
		gen.end(err)
		return nil, err
	}
	copts := &mcp.ClientOptions{
		// The SDK's log: its reasons for dropping tools go to gen.drops
		// (fetch logs them), anything else to the server's log, tagged
		// component=go-sdk.
		Logger: sdkwire.ClientLogger(s.log.With("component", "go-sdk").Handler(), "", gen.drops),
		// The SDK runs notification handlers one at a time; never block it.
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { gen.requestResync(kindTools) },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { gen.requestResync(kindResources) },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { gen.requestResync(kindPrompts) },
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			if req.Params != nil {
				s.src.ResourceUpdated(req.Params.URI)
			}
		},
	}
	// Capabilities: only what the consumers answer (elicitation,
	// sampling) and the roots. On protocol 2026-07-28 the bridge's multi
	// round-trip middleware (multiRoundTrip) answers a call's input
	// requests as the same requests in the middle of a call, in the
	// call's context.
	s.clientFeatures(copts)
	client := s.newClient(copts)
	session, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: s.cfg.ProtocolVersion})
	if err != nil {
		if p := gen.process(); p != nil {
			// The SDK closes the connection on most failures, not all; the
			// child's stderr is complete once it is gone.
			_ = p.Close()
		}
		err = gen.failed(err)
		gen.end(err)
		return nil, s.cfg.mcpPathHint(redact.Error(err))
	}
	gen.session = session
	go func() {
		err := session.Wait()
		if p := gen.process(); p != nil {
			// The child's own account ("child "x" (pid 42): exit status 7")
			// says more than the session's.
			<-p.Exited()
			if perr := p.ExitErr(); perr != nil {
				err = perr
			}
			err = gen.failed(cmp.Or(err, errServerClosed))
		}
		gen.end(err)
	}()
	return gen, nil
}

// mcpPathHint adds to err, a Streamable HTTP server's 404 to the
// handshake at a URL whose path does not end in /mcp, where servers
// usually answer: a URL copied without its /mcp is a common slip. Only
// the scheme and host of the URL are quoted (its path may hold a key).
func (c Config) mcpPathHint(err error) error {
	if c.Transport != TransportStreamableHTTP || !strings.HasSuffix(err.Error(), ": "+http.StatusText(http.StatusNotFound)) {
		return err
	}
	u, perr := url.Parse(c.URL)
	if perr != nil || strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/mcp") {
		return err
	}
	if strings.Trim(u.Path, "/") == "" {
		return fmt.Errorf("%w (no MCP endpoint at the URL's root: servers usually answer at /mcp; try %s://%s/mcp)", err, u.Scheme, u.Host)
	}
	return fmt.Errorf("%w (no MCP endpoint at the URL's path: servers usually answer at a path ending in /mcp)", err)
}

// discoverProbeBound is how long a stream connection waits for the answer
// to the server/discover probe (protocol 2026-07-28) before taking the
// server for one that ignores it and falling back to initialize
// (2025-11-25); for a stdio child, from when it has read the probe. A
// server that answers later has taken the probe for its handshake and
// refuses the fallback initialize as a duplicate: the attempt fails.
const discoverProbeBound = 5 * time.Second

// probed bounds the server/discover probe of a stream transport, unless
// protocolVersion pins a version that skips it. With child, a stdio
// server's, the bound runs from when the child has read the probe.
func (s *Server) probed(t mcp.Transport, child *childproc.Transport) mcp.Transport {
	if v := s.cfg.ProtocolVersion; v != "" && v < "2026-07-28" {
		return t
	}
	bound := cmp.Or(s.opts.probeBound, discoverProbeBound)
	probe := &sdkwire.ProbeTransport{Transport: t, Bound: bound, OnSilent: func() {
		s.log.Warn("server/discover got no answer; falling back to initialize — set protocolVersion: 2025-11-25 to skip the probe", "timeout", bound)
	}}
	if child != nil {
		probe.Unread = func() int {
			if p := child.Process(); p != nil {
				n, _ := p.UnreadInput() // 0 once stdin is closed
				return n
			}
			return 0
		}
	}
	return probe
}

// transport builds the transport of one attempt, with raw-result capture.
func (s *Server) transport(gen *generation) (mcp.Transport, error) {
	if s.opts.NewTransport != nil {
		t, err := s.opts.NewTransport()
		if err != nil {
			return nil, err
		}
		return s.probed(&sdkwire.CaptureTransport{Transport: s.servedTasks(gen, t), Table: gen.table.Table}, nil), nil
	}
	switch s.cfg.Transport {
	case TransportStdio:
		child := &childproc.Transport{
			Command:       s.cfg.Command,
			CommandText:   s.cfg.Written.Command, // messages never quote an expanded value
			Args:          s.cfg.Args,
			Env:           childproc.Env(s.opts.Environ, s.cfg.Env, s.opts.Withheld()...),
			Dir:           s.cfg.Cwd,
			DirText:       s.cfg.Written.Cwd,
			CloseGrace:    closeGrace(s.opts),
			TermGrace:     s.opts.TermGrace,
			After:         s.opts.ladderAfter,
			MaxLineLength: s.frameLimit(),
			Sandbox:       s.cfg.Sandbox,
		}
		gen.stderr = newStderrTail(errorBounds)
		var stderr *slog.Logger // built on the first line: lines arrive on one goroutine
		// Logged within a rate limit; the tails keep the latest lines all the same.
		logged := newLogLimit("child output lines dropped: over the rate limit")
		child.Stderr = func(line string) {
			if stderr == nil {
				p := child.Process()
				stderr = s.log.With("stream", "stderr", "pid", p.PID())
				go func() {
					<-p.Exited() // after its last line
					logged.report(stderr)
				}()
			}
			line = s.redact.line(line) // the log, too, is read by others than the server's owner
			if logged.allow() {
				logged.report(stderr)
				stderr.Info("child output", "line", line)
			}
			gen.stderr.add(line)
			s.recent.add(line)
		}
		gen.child = child
		return s.probed(&sdkwire.CaptureTransport{Transport: s.servedTasks(gen, gen.child), Table: gen.table.Table}, gen.child), nil
	case TransportStreamableHTTP:
		h, err := s.oauthHandler()
		if err != nil {
			return nil, err
		}
		t := &mcp.StreamableClientTransport{
			Endpoint:     s.cfg.URL,
			MaxEventSize: s.frameLimit(),
			// Beneath the rest: DPoP's nonce retry is one exchange to them.
			HTTPClient: &http.Client{Transport: s.roundTripper(gen, oauth.Transport(h, http.DefaultTransport))},
		}
		if h != nil {
			t.OAuthHandler = h
		}
		return t, nil
	case TransportSSE:
		// The legacy transport's GET stream is the session: when it ends
		// the SDK closes the connection, which the supervisor sees as lost.
		// It must live as long as the generation, not the attempt.
		return &sdkwire.LifetimeConnect{Transport: &mcp.SSEClientTransport{
			Endpoint:     s.cfg.URL,
			MaxEventSize: s.frameLimit(),
			HTTPClient:   &http.Client{Transport: s.roundTripper(gen, http.DefaultTransport)},
		}, Life: gen.ctx, End: gen.end}, nil
	default:
		return nil, fmt.Errorf("unknown transport %q", s.cfg.Transport)
	}
}

// closeGrace is how long a stdio child of a server with opts has to exit
// after its stdin is closed: as set, else OneShotCloseGrace for a one-shot
// server, else 0 (childproc's default).
func closeGrace(opts Options) time.Duration {
	switch {
	case opts.CloseGrace > 0:
		return opts.CloseGrace
	case opts.OneShot:
		return OneShotCloseGrace
	}
	return 0
}

// roundTripper is the HTTP stack of a Streamable HTTP attempt: the
// configured headers, raw-result capture (the SDK's HTTP connection has
// private hooks a wrapping connection would hide), and the signs of a lost
// connection the SDK does not report (docs/sdk.md §2.2, §4; the
// assumptions are listed in internal/sdkwire), over base.
func (s *Server) roundTripper(gen *generation, base http.RoundTripper) http.RoundTripper {
	lost := func(err error) {
		if gen.ctx.Err() == nil { // not our own close
			gen.end(err)
		}
	}
	var rt http.RoundTripper = &sdkwire.FailureWatch{Base: base, Lost: lost}
	rt = &sdkwire.StreamWatch{Base: rt, ListenEnded: lost, Reopened: func() { gen.requestResync(allKinds) },
		SubscriptionEnded: func(uris []string) { s.subscriptionEnded(gen, uris) }}
	rt = &sdkwire.CaptureRoundTripper{Base: rt, Table: gen.table.Table, MaxMessage: s.frameLimit()}
	if len(s.cfg.Headers) == 0 {
		return rt
	}
	headers := make(http.Header, len(s.cfg.Headers))
	for k, v := range s.cfg.Headers {
		headers.Set(k, v)
	}
	u, _ := url.Parse(s.cfg.URL) // validated with the config
	return &headerRoundTripper{base: rt, headers: headers, scheme: u.Scheme, host: u.Host}
}

// headerRoundTripper adds the configured headers to every request to the
// configured URL's origin (scheme and host): they often hold a token
// (headers: {Authorization: Bearer ...}), and a redirect, or a legacy SSE
// server's endpoint event, may name another origin, where net/http would
// drop its own Authorization but not one added here.
type headerRoundTripper struct {
	base         http.RoundTripper
	headers      http.Header
	scheme, host string
}

func (rt *headerRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != rt.scheme || !strings.EqualFold(req.URL.Host, rt.host) {
		return rt.base.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	for k, vs := range rt.headers {
		req.Header[k] = vs
	}
	return rt.base.RoundTrip(req)
}

// frameLimit is the largest inbound message the transport accepts: room for
// the envelope around a result at the size cap, so the cap, not the
// framing, decides (a frame over the limit breaks the whole connection).
func (s *Server) frameLimit() int {
	if s.opts.MaxResultBytes < 0 {
		return 1 << 30
	}
	return int(s.opts.MaxResultBytes) + 1<<20
}
