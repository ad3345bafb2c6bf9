// Package gatewayrun runs the gateway over a config, as `mcpbridge serve`
// does: the host that runs the configured servers, the registry their
// tools land in, the gateway that serves it, the gateway entry's Keeper
// (identity, policy, audit, the store), the console, the metrics and the
// listeners, wired from one Config. The command parses its flags into a
// Config and calls Run.
package gatewayrun

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/gatewayauth"
	gatewaykind "github.com/mcpbridge/mcpbridge/internal/kinds/gateway"
	"github.com/mcpbridge/mcpbridge/internal/metrics"
	"github.com/mcpbridge/mcpbridge/tool"
)

// Config is one run's settings. The zero value of each field is its
// default; Catalog, Load and Reload are required.
type Config struct {
	// Gateway holds the gateway's options from the command line
	// (origins, the bearer token, raw names, stateless, CallContext).
	// Run fills in the rest.
	Gateway gateway.Options
	// Stdio serves on Stdin and Stdout; otherwise HTTP on HTTPAddr
	// (default gateway.DefaultHTTPAddr).
	Stdio    bool
	HTTPAddr string
	// ReadyTimeout is how long requests wait for the first apply (0: they
	// do not wait; /readyz waits for it all the same); below zero, the
	// largest startupTimeout of the plan's enabled entries.
	ReadyTimeout time.Duration
	// CodeMode lists code mode's tools instead of the catalog.
	CodeMode bool
	// Console turns the web console on (HTTP only); a gateway entry with
	// a console block turns it on too. ConsoleToken signs its viewers in
	// while the config grants no identity; "" makes one and prints it.
	Console      bool
	ConsoleToken string
	// identitiesSignIn is set by Run when the config's identities sign
	// in to the console at start, so the console has no token of its own.
	identitiesSignIn bool
	// MetricsAddr serves /metrics and the probes on a listener of their
	// own; "" does not.
	MetricsAddr string
	// JSONLogs announces addresses as log records, not lines for a person.
	JSONLogs bool

	Logger *slog.Logger
	Stdin  io.Reader
	Stdout io.Writer // the protocol on stdio; the audit trail's "-"
	Stderr io.Writer // where addresses and the console token are printed
	// Lookup expands ${VAR} in the configs.
	Lookup func(string) (string, bool)

	// Catalog makes the run's kinds, the gateway entry's applied to k.
	Catalog func(k *gatewayauth.Keeper) *host.Catalog
	// Load reads the config with cat's kinds; nothing is started.
	Load func(cat *host.Catalog) (Source, error)
	// Prepare, when set, is called with the source about to run (the
	// pins of its files), before anything starts.
	Prepare func(Source) error
	// Reload reads the config files again (a change of one, the
	// console's reload of an entry); Files are those a reload reads now
	// (none: there is nothing to reload).
	Reload func(cat *host.Catalog) (*host.Plan, error)
	Files  func() []string
}

// Source is a config read: its plan and the files to watch (none when
// not a file).
type Source struct {
	Plan  *host.Plan
	Files []string
}

// GatewayEntryError is a gateway entry that is invalid or disabled: it
// guards every call, so nothing starts.
type GatewayEntryError struct{ Err error }

func (e *GatewayEntryError) Error() string {
	return "serve: the gateway entry guards every call and cannot be applied as written, so serve does not start: " + e.Err.Error()
}
func (e *GatewayEntryError) Unwrap() error { return e.Err }

// Run serves the config of cfg until ctx ends or, on stdio, the client
// leaves, then closes everything. An HTTP address that is not loopback
// while no token is required fails with gateway.ErrNotLoopback before
// any server starts; an invalid or disabled gateway entry with
// *GatewayEntryError.
func Run(ctx context.Context, cfg Config) error {
	links := &keeperLinks{}
	keeper := newKeeper(cfg, links)
	cat := cfg.Catalog(keeper)
	src, err := cfg.Load(cat)
	if err != nil {
		return err
	}
	if err := requireGateway(keeper, src.Plan, cfg.Stdio); err != nil {
		return err
	}
	cfg.Console = cfg.Console || (!cfg.Stdio && planHasConsole(src.Plan))
	cfg.identitiesSignIn = !keeper.ConsoleTokenSignsIn(planGateway(src.Plan))
	if cfg.Prepare != nil {
		if err := cfg.Prepare(src); err != nil {
			return err
		}
	}
	opts, applied := withReadiness(withKeeper(cfg.Gateway, keeper, src.Plan, cfg.Stdio), cfg.ReadyTimeout, src.Plan)
	r, err := newRun(cfg, keeper, cat, opts)
	if err != nil {
		return err
	}
	r.link(links)
	r.applied = applied
	return r.run(ctx, src)
}

// withReadiness sets the gateway to hold requests until the first apply of
// plan has settled, at most d, below zero the largest startupTimeoutMs;
// 0 does not hold them. Either way the gateway is ready (/readyz) once
// that apply has settled: not holding requests does not make a replica
// ready before its servers have started. The returned channel is to be
// closed once that apply returned.
func withReadiness(opts gateway.Options, d time.Duration, plan *host.Plan) (gateway.Options, chan struct{}) {
	if d < 0 {
		d = 0
		for _, pe := range plan.Entries {
			if !pe.Entry.Disabled {
				d = max(d, pe.Spec.StartupTimeout)
			}
		}
	}
	if d == 0 {
		d = -1 // requests do not wait (gateway.Options.ReadyTimeout)
	}
	applied := make(chan struct{})
	opts.Ready, opts.ReadyTimeout = applied, d
	return opts, applied
}

// serveRun is what one run wires together: the host that runs the
// configured servers, the registry their tools land in, and the gateway
// that serves the registry.
type serveRun struct {
	cfg    Config
	keeper *gatewayauth.Keeper
	log    *slog.Logger
	opts   gateway.Options // with Logger and Health filled in
	h      *host.Host
	gw     *gateway.Gateway
	// applied is closed once the first plan is applied.
	applied chan struct{}
	// metrics are the run's Prometheus metrics, nil when not served.
	metrics *metrics.Metrics
	reg     *tool.Registry
	// console is the web console, nil without it.
	console *serveConsole
	// bg are the run's goroutines besides serving: run waits for them.
	bg sync.WaitGroup
}

// newRun builds the run; nothing starts yet.
func newRun(cfg Config, keeper *gatewayauth.Keeper, cat *host.Catalog, opts gateway.Options) (*serveRun, error) {
	log := cfg.Logger
	reg := tool.NewRegistry()
	// Every file in use is watched; a change of one re-reads them all.
	h, err := host.New(host.Options{Catalog: cat, Registry: reg, Logger: log, Lookup: cfg.Lookup,
		Parse: func(string, []byte) (*host.Plan, error) { return reread(cfg, cat, keeper) }})
	if err != nil {
		return nil, err
	}
	opts.Logger = log
	opts.Health = func() []gateway.BackendState {
		statuses := h.Status()
		b := BackendStates(statuses)
		if s := keeperState(keeper, statuses); s != nil {
			b = append(b, *s)
		}
		if s := storeState(context.Background(), keeper); s != nil {
			b = append(b, *s)
		}
		if s := fileState(h.FileRefusal()); s != nil {
			b = append(b, *s)
		}
		return b
	}
	opts.ServerOrder = func() []string { return ServerOrder(h.Status()) }
	// Replicas sharing a store compare what their hosts apply.
	opts.ConfigDigest = h.Digest
	opts.NewView = sessionViews(cat, reg)
	code := &gatewayCode{}
	if cfg.CodeMode {
		if opts, err = withCodeMode(opts, reg, code); err != nil {
			return nil, errors.Join(err, h.Close())
		}
	}
	r := &serveRun{cfg: cfg, keeper: keeper, log: log, h: h, reg: reg}
	// The console charts what the metrics observe: it wraps their Observer.
	if opts, err = r.withConsole(r.observe(opts, reg), cat); err != nil {
		return nil, errors.Join(err, h.Close())
	}
	r.opts = r.consoleCalls(opts)
	r.gw = gateway.New(reg, r.opts)
	code.gw = r.gw
	return r, nil
}

// run serves at once: initialize is answered while the servers start, and
// other requests wait for the first plan to be applied (withReadiness), so
// a client's first tools/list has every server that could start. Reloads
// start once the first plan is applied. The addresses are listened on
// before any server starts, so an address refused (not loopback, no
// token) or taken starts nothing. run returns when ctx ends or, on stdio,
// the client leaves, after closing everything.
func (r *serveRun) run(ctx context.Context, src Source) error {
	ln, err := r.listen()
	if err != nil {
		return errors.Join(err, r.gw.Close(), r.h.Close())
	}
	stopMetrics, err := r.serveMetrics()
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		return errors.Join(err, r.gw.Close(), r.h.Close())
	}
	// Say why serve stops (a terminal that hung up is not obvious) as it
	// begins to: the stop may take seconds.
	defer context.AfterFunc(ctx, func() { r.log.Info("stopping", "why", context.Cause(ctx).Error()) })()
	runCtx, stop := context.WithCancelCause(ctx)
	r.bg.Go(func() { r.applyAndWatch(runCtx, src, stop) })
	serveErr := r.serveTransport(runCtx, ln)
	stop(nil)
	stopMetrics()
	closeErr := errors.Join(r.gw.Close(), r.h.Close())
	r.bg.Wait()
	if failed := context.Cause(runCtx); !errors.Is(failed, context.Canceled) {
		return errors.Join(failed, closeErr)
	}
	if serveErr != nil && !errors.Is(serveErr, context.Canceled) && !errors.Is(serveErr, gateway.ErrClosed) {
		return errors.Join(serveErr, closeErr)
	}
	if closeErr != nil {
		r.log.Warn("mcpbridge: shutdown: " + closeErr.Error())
	}
	return nil
}

// applyAndWatch runs src's plan, then applies its file whenever it
// changes, until ctx ends. Failures are logged by the host, entry by
// entry, except that of the gateway entry on the first apply: that one
// stops the run (fail), since it guards every call.
func (r *serveRun) applyAndWatch(ctx context.Context, src Source, fail context.CancelCauseFunc) {
	_ = r.h.Apply(ctx, src.Plan)
	if err := gatewayNotApplied(r.keeper, src.Plan, r.h.Status()); err != nil && ctx.Err() == nil {
		fail(err)
	}
	close(r.applied)
	if len(src.Files) == 0 || ctx.Err() != nil {
		return
	}
	var wg sync.WaitGroup
	for _, path := range src.Files {
		wg.Go(func() {
			if err := r.h.WatchFile(ctx, path); err != nil && ctx.Err() == nil && !errors.Is(err, host.ErrClosed) {
				r.log.Error("mcpbridge: watching " + path + ": " + err.Error())
			}
		})
	}
	wg.Wait()
}

// listen listens on the HTTP address; nil on stdio.
func (r *serveRun) listen() (net.Listener, error) {
	if r.cfg.Stdio {
		return nil, nil
	}
	addr := r.cfg.HTTPAddr
	if addr == "" {
		addr = gateway.DefaultHTTPAddr
	}
	return gateway.Listen(addr, r.opts)
}

// serveTransport serves the gateway on ln, or on stdio when ln is nil,
// until ctx ends (or the stdio client leaves) and returns why it stopped.
func (r *serveRun) serveTransport(ctx context.Context, ln net.Listener) error {
	if ln == nil {
		return r.gw.ServeStdio(ctx, io.NopCloser(r.cfg.Stdin), nopWriteCloser{r.cfg.Stdout})
	}
	r.announce(ctx, ln.Addr())
	r.announceConsole(ln.Addr())
	if r.console != nil {
		// The console's live streams end with the run, so the server's
		// shutdown does not wait for them.
		defer context.AfterFunc(ctx, r.console.con.Close)()
	}
	return r.gw.ServeListener(ctx, ln)
}

// BackendStates is /healthz's view of the host: no config, no secrets.
// Disabled entries are not backends: they neither count nor spoil the
// health.
func BackendStates(statuses []host.Status) []gateway.BackendState {
	out := make([]gateway.BackendState, 0, len(statuses))
	for _, st := range statuses {
		if st.State == host.StateDisabled {
			continue
		}
		name := st.Name
		if name == "" {
			name = st.ID
		}
		out = append(out, gateway.NewBackendState(name, string(st.State), st.State == host.StateReady, st.Tools, backendError(st)))
	}
	return out
}

// backendError is st's error for /healthz: its last failure and, when a
// reload refused the config on disk, that refusal. A refusal leaves the
// backend OK (its previous config serves), so /readyz stays 200: a typo
// must not take every replica out of a load balancer.
func backendError(st host.Status) string {
	if st.Refused == nil {
		return st.Err
	}
	if st.Err == "" {
		return st.Refused.String()
	}
	return st.Err + "; " + st.Refused.String()
}

// fileState is /healthz's entry for a config file the last reload could
// not read or parse (ref), nil without one. It stays OK, as an entry's
// refused config does: the running entries serve as they were.
func fileState(ref *host.Refusal) *gateway.BackendState {
	if ref == nil {
		return nil
	}
	s := gateway.NewBackendState("config file", "refused", true, 0, ref.String())
	return &s
}

// keeperState is a failing health entry when the Keeper requires a
// gateway entry and none is in force while no entry stands for it (a
// reload removed or disabled it): every call is refused, so the gateway
// is not OK. An entry that stands for it reports its own state. nil
// otherwise.
func keeperState(k *gatewayauth.Keeper, statuses []host.Status) *gateway.BackendState {
	if !k.Required() || k.Current() != nil {
		return nil
	}
	why := "no gateway entry is in force, so every call is refused: add it back to the config, or restart serve to run without one"
	for _, st := range statuses {
		switch {
		case st.Plugin != gatewaykind.Name:
		case st.State != host.StateDisabled:
			return nil
		default:
			why = "the gateway entry is disabled, so every call is refused: enable it, or remove it and restart serve to run without one"
		}
	}
	s := gateway.NewBackendState(gatewaykind.Name, string(host.StateFailed), false, 0, why)
	return &s
}

// ServerOrder is the servers' names in config order: which server keeps a
// raw name two offer (serve --raw-names), and which a URI two offer.
func ServerOrder(statuses []host.Status) []string {
	out := make([]string, 0, len(statuses))
	for _, st := range statuses {
		out = append(out, st.Name)
	}
	return out
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
