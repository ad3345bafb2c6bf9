package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/buildinfo"
	"github.com/mcpbridge/mcpbridge/internal/sandbox"
	"github.com/mcpbridge/mcpbridge/tool"
)

// Version is the client version the bridge reports to servers.
const Version = buildinfo.Version

// DefaultMaxResultBytes bounds the raw size of one tools/call result. A
// result over it but within the transport's frame limit (1 MiB more) fails
// its call with a clear message; a larger message breaks the connection,
// which is then reconnected: either way the bridge never holds more than
// the frame limit for one message.
const DefaultMaxResultBytes = 16 << 20

// DefaultMaxCatalogBytes bounds one server's tool catalog as a whole: the
// raw bytes of every tools/list page of one discovery, added up. A
// discovery whose pages pass it fails with an error naming the limit, and
// the tools of the previous discovery stay registered.
const DefaultMaxCatalogBytes = 64 << 20

// DefaultMaxTools bounds how many tools one server may list. Every tool
// costs the bridge memory of its own (its definition, its registration,
// its entry in a gateway's catalog), which the catalog's byte limit alone
// would let reach gigabytes in small tools; a discovery listing more fails
// with an error naming the server and the limit, and the tools of the
// previous discovery stay registered. A server's prompts, resources,
// resource templates and skills are bounded alike, each list on its own.
const DefaultMaxTools = 20_000

// MaxDescriptionBytes bounds one tool's description: a longer one is cut at
// a UTF-8 boundary within the bound and ends with DescriptionTruncatedMarker
// (the tool is kept, and a warning names it).
const MaxDescriptionBytes = 64 << 10

// DescriptionTruncatedMarker ends a description cut at MaxDescriptionBytes.
const DescriptionTruncatedMarker = " …[description truncated by mcpbridge]"

// MaxSchemaBytes bounds one tool's inputSchema and, separately, its
// outputSchema: a tool with a larger one is dropped from the catalog, with
// a warning naming it.
const MaxSchemaBytes = 1 << 20

// OneShotCloseGrace is how long a one-shot server's child (Options.OneShot)
// has to exit on its own once its stdin is closed, before the shutdown
// ladder sends SIGTERM to its process group; SIGKILL still waits TermGrace
// (2 s) after that. A long-running bridge keeps the full close grace
// (childproc.DefaultCloseGrace, 2 s).
//
// Why shorter only for one-shot commands: a person waits at the prompt for
// tools, call or status to end, and a server that ignores stdin EOF (such
// as server-everything, which keeps a request to its client pending) held
// every such command 2 s past its answer. A server that does exit on EOF
// is not hurried by it: the node and Go servers the tests run exit within
// about 10 ms of EOF, a tenth of this window, and one that needs longer
// gets SIGTERM, the polite request, with TermGrace left to clean up.
const OneShotCloseGrace = 100 * time.Millisecond

// defaultCloseTimeout bounds how long closing one generation may take
// before the bridge gives up on it (docs/upstream.md §3.4 close barrier).
const defaultCloseTimeout = 5 * time.Second

// Options are the dependencies of a Server. The zero value of every optional
// field is useful.
type Options struct {
	// Registry receives the server's tools, through a Source of its own.
	// Required unless Source is set.
	Registry *tool.Registry
	// Source, when set, is the registration the server publishes its tools
	// through instead of a new Source of Registry: a host hands a restarted
	// server its predecessor's Successor, so the new tools replace the old
	// ones in one swap once the new connection is ready. The server closes
	// it on Close.
	Source *tool.Source
	// Logger receives the server's log records and its child's stderr,
	// tagged with server=<serverName>. nil discards them.
	Logger *slog.Logger
	// Environ is the parent environment stdio children inherit (scrubbed).
	// nil means os.Environ().
	Environ []string
	// Withheld, when set, names the variables of Environ no child
	// inherits unless its own env passes them: those the config names as
	// holding credentials (host.Plan.CredentialVars), read as each child
	// starts, so that a reload that names another is heeded.
	Withheld func() []string
	// MaxResultBytes bounds one tools/call result; 0 means
	// DefaultMaxResultBytes, a negative value means no limit of the bridge's
	// own (messages are still bounded at 1 GiB).
	MaxResultBytes int64
	// MaxCatalogBytes bounds the raw bytes of all tools/list pages of one
	// discovery; 0 means DefaultMaxCatalogBytes (64 MiB), a negative value
	// means no bound but the page count's. Over it the discovery fails
	// naming the limit, and the previous tools stay.
	MaxCatalogBytes int64
	// MaxTools bounds the tools of one discovery, and as well each of its
	// other lists (prompts, resources, resource templates, skills); 0
	// means DefaultMaxTools, a negative value means no bound but
	// MaxCatalogBytes.
	MaxTools int
	// CloseGrace and TermGrace override the stdio shutdown ladder
	// (docs/decisions.md §4: 2 s each; a OneShot server's CloseGrace is
	// OneShotCloseGrace). Tests shorten them.
	CloseGrace, TermGrace time.Duration
	// NewTransport, when set, provides the transport of every connection
	// attempt instead of the one the Config describes: in-process servers
	// (mcp.NewInMemoryTransports) and tests. It is called once per attempt.
	NewTransport func() (mcp.Transport, error)
	// OneShot marks a server used for a single command (the CLI's tools and
	// call): it never reconnects and logs nothing about reconnecting;
	// failures are reported by WaitReady and Status only.
	OneShot bool
	// Tracer, when set, traces each connection attempt, tool sync and tool
	// call, and carries a call's trace context to the server in _meta; nil
	// traces nothing.
	Tracer Tracer
	// OAuth says how a Streamable HTTP server that wants OAuth is
	// authorized; the zero value never asks a person (the server shows as
	// needs-login) and keeps tokens in memory.
	OAuth OAuthOptions
	// Ask answers the server's requests (elicitation, sampling) made
	// outside any call, or during a call whose consumer set no
	// tool.WithAsk; nil refuses them.
	Ask tool.AskFunc
	// Elicit and Sample say which requests the consumers answer, so the
	// server is told it may make them: elicitation (forms and URLs), and
	// sampling (only for entries with allowSampling).
	Elicit, Sample bool
	// Pins decides which of the server's tools and prompts may be
	// published (see Config.Pin); shared by the servers of a host. nil
	// publishes them all.
	Pins Pins
	// ScanAll runs the definition scan on every server, whatever its
	// scan setting, and withholds nothing: the scan command reports what
	// each would flag.
	ScanAll bool

	closeTimeout time.Duration                        // tests shorten the close barrier
	ladderAfter  func(time.Duration) <-chan time.Time // the shutdown ladder's clock; nil: the real one
	probeBound   time.Duration                        // tests shorten discoverProbeBound
	unmatched    *unmatchedNames                      // shared with the share: session instances
}

// Server is the bridge to one MCP server: it connects, registers the
// server's tools under their public names, keeps them in sync, reconnects,
// and unregisters them when closed. Create it with Start; all methods are
// safe for concurrent use.
type Server struct {
	cfg    Config
	policy ReconnectPolicy
	opts   Options
	log    *slog.Logger // tagged server=<serverName>
	prefix string       // "mcp-client(<serverName>)", upstream's prefix of error texts

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	done   chan struct{} // closed when the supervisor returned
	ready  chan struct{} // closed when the first attempt settled
	// firstDeadline ends the first attempt. Set before Start returns, so
	// a host that starts its own startup clock after Start finds the
	// attempt past its deadline whenever its own clock has run out, and
	// Status then words the timeout as the attempt will.
	firstDeadline time.Time

	mu        sync.RWMutex // read-locked by every call (current)
	cur       *generation  // nil while down
	src       *tool.Source // the server's registration; never nil
	status    Status
	firstStep string // the first attempt's step while it runs ("connecting", "tool discovery"), else ""
	startErr  error
	conflict  string // why the last sync registered nothing, if it did
	closeOnce sync.Once
	closeErr  error

	inflight inflight // calls in flight, for Drain

	warned defWarnings // the syncs' warnings about definitions

	listed  listed           // the last good lists; supervisor goroutine only
	subs    subscriptions    // resource URIs consumers subscribed to
	callers callers          // calls in flight, for attributing the server's requests
	asks    pendingAsks      // the server's requests waiting for an answer
	logs    *logLimit        // the rate limit of the server's log messages
	sent    sentAsks         // the server's latest elicitations as written
	related relatedAsks      // the server's latest requests tied to their calls
	shared  sessionInstances // share: session: the instances by session
	roots   rootList         // offered to the server; from Config.Roots
	scanned scanMemo         // the definition scan's last results; supervisor goroutine only
	recent  *stderrTail      // the stdio children's recent stderr, for Status
	redact  redactor         // the entry's secrets, out of its children's stderr
}

// Start validates cfg and starts connecting in the background. Use
// WaitReady to wait for the first attempt, and Close to stop.
func Start(cfg Config, opts Options) (*Server, error) {
	src := opts.Source
	switch {
	case src == nil && opts.Registry == nil:
		return nil, errors.New("mcpclient: Options.Registry or Options.Source is required")
	case src == nil:
		src = opts.Registry.NewSource()
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("server", cfg.ServerName)
	if opts.Environ == nil {
		opts.Environ = os.Environ()
	}
	if opts.Withheld == nil {
		opts.Withheld = func() []string { return nil }
	}
	if opts.closeTimeout == 0 {
		opts.closeTimeout = defaultCloseTimeout
	}
	if opts.MaxResultBytes == 0 {
		opts.MaxResultBytes = DefaultMaxResultBytes
	}
	if opts.MaxCatalogBytes == 0 {
		opts.MaxCatalogBytes = DefaultMaxCatalogBytes
	}
	if opts.MaxTools == 0 {
		opts.MaxTools = DefaultMaxTools
	}
	if opts.unmatched == nil {
		opts.unmatched = &unmatchedNames{}
	}
	roots, err := rootsOf(cfg.Roots)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.ServerName, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		recent: newStderrTail(recentBounds),
		redact: newRedactor(cfg),
		logs:   newLogLimit("server log messages dropped: over the rate limit"),
		roots:  roots,
		cfg:    cfg,
		policy: *cfg.Reconnect,
		opts:   opts,
		log:    log,
		prefix: "mcp-client(" + cfg.ServerName + ")",
		ctx:    ctx,
		cancel: cancel,
		done:   make(chan struct{}),
		ready:  make(chan struct{}),
		src:    src,
		status: Status{
			Name:        cfg.ServerName,
			Transport:   string(cfg.Transport),
			State:       StateStarting,
			MaxAttempts: cfg.Reconnect.MaxAttempts,
		},
		firstDeadline: time.Now().Add(cfg.StartupTimeout),
	}
	go s.supervise()
	return s, nil
}

// Config returns the server's configuration with defaults filled in.
func (s *Server) Config() Config { return s.cfg }

// Ready is closed when the first connection attempt has settled: connected
// and discovered, or failed.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// WaitReady waits until the first attempt settled or ctx is done, and
// returns the first attempt's error (nil when it connected). With
// FailOnStartupError, a failed first attempt also stops the server.
func (s *Server) WaitReady(ctx context.Context) error {
	select {
	case <-s.ready:
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.startErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Status returns a snapshot of the connection in the host's vocabulary
// (ID and Plugin are left to the host).
func (s *Server) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.status
	if st.State == StateStarting && st.Err == "" && s.firstStep != "" && time.Now().After(s.firstDeadline) {
		// Timed out, not yet recorded: the text the attempt records, so
		// that Status says the same whenever it is read.
		st.Err = s.timedOut(s.firstStep, nil).Error()
	}
	st.Tools = s.src.Len()
	st.PinNotes = slices.Clone(st.PinNotes)
	st.Stderr = s.recent.Lines()
	if st.Sandbox == nil && s.cfg.Sandbox != nil {
		// Not running: what a start would confine it with.
		st.Sandbox = &SandboxStatus{LandlockABI: sandbox.ABI(), Network: s.cfg.Sandbox.Network}
	}
	if s.cur != nil && st.State == StateReady {
		st.Sandbox = withDenials(st.Sandbox, s.cur.process())
	}
	return st
}

// Close stops the server: it cancels a pending reconnect, ends in-flight
// calls (Drain first lets them finish), shuts the connection down (for
// stdio, the whole process group), and unregisters every tool. It is
// idempotent; it returns an error only when the connection did not close
// within the close barrier (it waits for it all the same), and every call
// returns the first call's result.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.cancel()
		<-s.done
		s.shared.reaper.Wait()
		s.mu.Lock()
		s.status.State = StateClosed
		s.mu.Unlock()
		s.src.Close()
	})
	return s.closeErr
}

// supervise owns the connection: every attempt, sync, backoff and give-up
// happens on this goroutine, so they are serialized without a queue. What
// follows a failure is decided by nextStep, a pure function.
func (s *Server) supervise() {
	defer close(s.done)
	// Readiness settles once the first attempt's outcome is recorded in
	// Status, so a caller woken by Ready sees the state that follows it.
	st := &startup{s: s}
	defer st.settle()
	failures := 0
	for first := true; ; first = false {
		gen, err := s.attempt(first)
		if first {
			st.err = err
			if err == nil {
				st.settle()
			}
		}
		if first && err != nil && s.cfg.FailOnStartupError {
			s.log.Error("initial connection or tool synchronization failed", "err", err)
			s.setDown(err)
			s.setState(failedState(err), 0)
			return
		}
		if s.ctx.Err() != nil || errors.Is(err, errGenerationStuck) {
			if gen != nil {
				s.closeGeneration(gen)
			}
			return
		}
		var up time.Duration // how long the lost generation was connected
		lost := err == nil
		if lost {
			var ok bool
			if up, err, ok = s.runGeneration(gen, failures); !ok {
				return
			}
		} else if !s.opts.OneShot {
			s.log.Warn("connection attempt failed", "err", err)
		}
		s.setDown(err)
		next := nextStep(s.policy, s.opts.OneShot, failures, lost, up)
		if !s.follow(next, lost, err) {
			return
		}
		failures = next.failures
		st.settle()
		if !s.sleep(next.delay) {
			return
		}
	}
}

// startup settles readiness once, with the first attempt's error.
type startup struct {
	s       *Server
	err     error
	settled bool
}

func (st *startup) settle() {
	if !st.settled {
		st.settled = true
		st.s.settleStartup(st.err)
	}
}

// runGeneration serves a connected generation until it ends. It returns how
// long the generation was up and why it ended; ok is false when the
// supervisor must stop (the server is closing, or the generation would not
// close).
func (s *Server) runGeneration(gen *generation, failures int) (up time.Duration, err error, ok bool) {
	if failures > 0 {
		s.log.Info("reconnected and re-synced tools", "attempt", failures, "max_attempts", s.policy.MaxAttempts)
	}
	connectedAt := time.Now()
	err = s.serve(gen)
	if s.ctx.Err() != nil {
		s.closeGeneration(gen)
		return 0, err, false
	}
	s.log.Warn("connection lost", "err", err)
	return time.Since(connectedAt), err, s.closeGeneration(gen)
}

// verdict is what the supervisor does after a failed attempt or a lost
// connection.
type verdict int

const (
	// retry: back off for step.delay, then attempt again.
	retry verdict = iota
	// stopFailed: a one-shot server, or reconnect disabled: stop, failed.
	stopFailed
	// giveUp: the attempt budget is spent: unregister the tools and stop.
	giveUp
)

// step is the supervisor's decision after a failure.
type step struct {
	verdict  verdict
	failures int           // consecutive failures, this one included
	delay    time.Duration // before the next attempt, for retry
}

// nextStep decides what follows a failed attempt (lost false) or a lost
// connection that had been up for up, after failures consecutive failures.
// A connection that stayed up for at least MaxDelay resets the budget.
func nextStep(p ReconnectPolicy, oneShot bool, failures int, lost bool, up time.Duration) step {
	if oneShot || !p.Enabled {
		return step{verdict: stopFailed, failures: failures}
	}
	if lost && up >= p.MaxDelay {
		failures = 0
	}
	failures++
	if failures > p.MaxAttempts {
		return step{verdict: giveUp, failures: failures}
	}
	return step{verdict: retry, failures: failures, delay: backoff(p, failures)}
}

// follow carries out next: it logs, sets the state, and reports whether
// the supervisor goes on. err is why the attempt failed or the connection
// was lost.
func (s *Server) follow(next step, lost bool, err error) bool {
	switch next.verdict {
	case stopFailed:
		switch {
		case s.opts.OneShot:
		case lost:
			s.log.Error("connection lost and reconnect is disabled — registered tools will fail until a reload or restart", "err", err)
		default:
			s.log.Error("connection failed and reconnect is disabled — no tools were registered; reload the config or restart mcpbridge to connect", "err", err)
		}
		if lost {
			s.setState(StateFailed, 0)
		} else {
			s.setState(failedState(err), 0)
		}
		return false
	case giveUp:
		s.unregisterAll()
		s.log.Error("giving up after consecutive failed reconnect attempts — tools unregistered; reload the config or restart mcpbridge to reconnect",
			"max_attempts", s.policy.MaxAttempts, "err", err)
		s.setState(StateFailed, 0)
		return false
	}
	msg := "connection failed; retrying"
	if lost {
		msg = "connection lost; reconnecting"
	}
	s.log.Warn(msg, "delay", next.delay, "attempt", next.failures, "max_attempts", s.policy.MaxAttempts)
	if needsLogin(err) {
		// The next attempt reads the token store again: a login meanwhile
		// brings the server back.
		s.setState(StateNeedsLogin, next.failures)
		return true
	}
	s.setState(StateReconnecting, next.failures)
	return true
}

// failedState is the final state after a failed connection attempt:
// needs-login when the server wants a person to log in, timed out when
// startupTimeoutMs ran out, else failed.
func failedState(err error) State {
	if needsLogin(err) {
		return StateNeedsLogin
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return StateTimedOut
	}
	return StateFailed
}

// sleep waits d, or until the server closes (then it reports false).
func (s *Server) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// backoff is min(maxDelay, initialDelay·2^(n−1)), without overflow.
func backoff(p ReconnectPolicy, n int) time.Duration {
	d := p.InitialDelay
	for i := 1; i < n && d < p.MaxDelay; i++ {
		d *= 2
	}
	return min(d, p.MaxDelay)
}

func (s *Server) settleStartup(err error) {
	s.mu.Lock()
	s.startErr = err
	s.mu.Unlock()
	close(s.ready)
}

func (s *Server) setState(st State, attempt int) {
	s.mu.Lock()
	s.status.State = st
	s.status.Attempt = attempt
	if st == StateReconnecting {
		s.status.Reconnects++
	}
	s.mu.Unlock()
}

func (s *Server) setDown(err error) {
	s.mu.Lock()
	s.cur = nil
	s.status.PID = 0
	s.status.Sandbox = nil
	s.firstStep = ""
	if err != nil {
		s.status.Err = downText(err)
	}
	s.mu.Unlock()
}

func (s *Server) unregisterAll() { s.src.Clear() }

// minResyncInterval spaces re-syncs: notifications that arrive meanwhile
// coalesce into one, so a list_changed storm costs at most one tools/list
// per interval (issue: bounded resources under abuse).
const minResyncInterval = 50 * time.Millisecond

// serve runs an established generation until it ends or the server closes:
// it re-syncs on tools/list_changed. It returns why the generation ended.
func (s *Server) serve(gen *generation) error {
	var last time.Time
	for {
		select {
		case <-s.ctx.Done():
			return s.ctx.Err()
		case <-gen.done:
			return gen.endErr()
		case <-gen.resync:
		}
		if wait := minResyncInterval - time.Since(last); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-s.ctx.Done():
				t.Stop()
				return s.ctx.Err()
			case <-gen.done:
				t.Stop()
				return gen.endErr()
			case <-t.C:
			}
			select { // what arrived meanwhile is covered by this sync
			case <-gen.resync:
			default:
			}
		}
		last = time.Now()
		kinds := listKind(gen.dirty.Swap(0))
		s.log.Info("list changed, re-syncing", "lists", kinds.String())
		// A fetch cut short by the connection's end is not a failed
		// re-sync: the loss is reported and handled right after.
		if err := s.sync(gen, false, kinds); err != nil && s.ctx.Err() == nil && !gen.ended() && !connectionGone(err) {
			s.log.Error("tool re-sync failed", "err", err)
		}
	}
}

// closeGeneration closes gen and waits for it to end, at most closeTimeout.
// It reports false when the generation would not close, in which case the
// supervisor stops rather than risk two processes of one server.
func (s *Server) closeGeneration(gen *generation) bool {
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		gen.close()
	}()
	select {
	case <-closed:
		return true
	case <-time.After(s.opts.closeTimeout):
	}
	if s.ctx.Err() != nil {
		s.log.Error("generation did not close in time during shutdown — server shutdown may be incomplete", "timeout", s.opts.closeTimeout)
		s.mu.Lock()
		s.closeErr = fmt.Errorf("%s: generation did not close within %dms during shutdown — server shutdown may be incomplete",
			s.prefix, s.opts.closeTimeout.Milliseconds())
		s.mu.Unlock()
	} else {
		s.log.Error("failed generation did not close in time — reconnect stopped to avoid overlapping server processes; reload the config or restart mcpbridge to retry", "timeout", s.opts.closeTimeout)
		s.unregisterAll()
		s.setState(StateFailed, 0)
	}
	<-closed // the close ladder always ends: it SIGKILLs the process group
	return false
}
