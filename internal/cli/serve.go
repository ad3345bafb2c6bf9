package cli

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/metrics"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
	"github.com/mcpbridge/mcpbridge/tool"
)

// serve runs the gateway: every configured server's tools as one MCP
// server, over stdio or Streamable HTTP, kept live with hot reload, until
// the context ends (SIGINT/SIGTERM) or, on stdio, the client leaves.
func (e *env) serve(ctx context.Context, argv []string) error {
	f, err := parseFlags("serve", specOf("serve"), argv)
	if err != nil {
		return err
	}
	opts, err := e.serveOptions(f)
	if err != nil {
		return err
	}
	links := &keeperLinks{}
	e.keeper = e.newKeeper(opts, links, e.serveLogger(f))
	// The catalog comes after serveOptions, which takes the token out of
	// the children's environment.
	cat := e.catalogOAuth(false, e.oauthOptions(f))
	src, err := e.loadSource(f, cat)
	if err != nil {
		return err
	}
	if cat, src, err = e.scrubGatewayTokens(f, cat, src); err != nil {
		return err
	}
	if err := e.requireGateway(src.plan); err != nil {
		return err
	}
	f.console = f.console || (f.http && planHasConsole(src.plan))
	if err := e.loadPins(src, f, true); err != nil {
		return err
	}
	opts, applied := withReadiness(withKeeper(opts, e.keeper, src.plan), f, src)
	r, err := e.newServeRun(f, cat, opts)
	if err != nil {
		return err
	}
	r.link(links)
	r.applied = applied
	return r.run(ctx, src)
}

// checkServeFlags checks serve's command line beyond what parseFlags does.
func checkServeFlags(f *flags) error {
	if len(f.args) > 0 {
		return usagef("serve: unexpected argument %q", f.args[0])
	}
	if f.stdio == f.http {
		return usagef("serve: say how to serve: --stdio, or --http [ADDR] (default %s)", gateway.DefaultHTTPAddr)
	}
	if f.stdio && (f.tokenEnv != "" || f.insecure || len(f.origins) > 0 || f.console) {
		return usagef("serve: --token-env, --allow-origin, --insecure-no-auth-on-network and --console go with --http")
	}
	if _, err := readyTimeout(f.readyTimeout); err != nil {
		return err
	}
	return nil
}

// readyTimeout parses --ready-timeout; -1 means it was not given.
func readyTimeout(v string) (time.Duration, error) {
	if v == "" {
		return -1, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, usagef("serve: --ready-timeout %q: want a duration such as 30s, or 0 not to wait", v)
	}
	return d, nil
}

// withReadiness sets the gateway to hold requests until the first apply of
// src's plan has settled, at most --ready-timeout, by default the largest
// startupTimeoutMs. The returned channel, nil when not waiting, is to be
// closed once that apply returned.
func withReadiness(opts gateway.Options, f *flags, src *source) (gateway.Options, chan struct{}) {
	d, _ := readyTimeout(f.readyTimeout) // checked by checkServeFlags
	if d < 0 {
		d = 0
		for _, pe := range src.plan.Entries {
			if !pe.Entry.Disabled {
				d = max(d, pe.Spec.StartupTimeout)
			}
		}
	}
	if d == 0 {
		return opts, nil
	}
	applied := make(chan struct{})
	opts.Ready, opts.ReadyTimeout = applied, d
	return opts, applied
}

// serveOptions checks serve's flags and turns them into the gateway's
// options, all but those of the run (Logger, Health). The --token-env
// variable leaves the environment the children inherit.
func (e *env) serveOptions(f *flags) (gateway.Options, error) {
	if err := checkServeFlags(f); err != nil {
		return gateway.Options{}, err
	}
	opts := gateway.Options{AllowedOrigins: f.origins, InsecureAllowNonLoopback: f.insecure, RawNames: f.rawNames, Stateless: f.ops.stateless}
	if f.tokenEnv != "" {
		if !yamlconf.IsVarName(f.tokenEnv) {
			return gateway.Options{}, usagef("serve: --token-env takes the name of the variable that holds the token, not the token: export MCPBRIDGE_TOKEN=… and pass --token-env MCPBRIDGE_TOKEN")
		}
		if opts.BearerToken = e.getenv(f.tokenEnv); opts.BearerToken == "" {
			return gateway.Options{}, usagef("serve: --token-env %s: the variable is unset or empty", f.tokenEnv)
		}
		// The gateway's own credential is never a child's business,
		// whatever its name.
		e.Environ = withoutVar(e.Environ, f.tokenEnv)
	}
	// The console's token is never a child's business, whether or not
	// the console is on (the gateway entry may turn it on).
	e.Environ = withoutVar(e.Environ, consoleTokenVar)
	return opts, nil
}

// serveRun is what one serve run wires together: the host that runs the
// configured servers, the registry their tools land in, and the gateway
// that serves the registry.
type serveRun struct {
	e    *env
	f    *flags
	log  *slog.Logger
	opts gateway.Options // with Logger and Health filled in
	h    *host.Host
	gw   *gateway.Gateway
	// applied is closed once the first plan is applied (nil: no one waits).
	applied chan struct{}
	// metrics are the run's Prometheus metrics, nil when not served.
	metrics *metrics.Metrics
	reg     *tool.Registry
	// console is --console's web console, nil without it.
	console *serveConsole
}

// serveLogger is serve's logger: stdout may be the protocol, so logs go
// to stderr, always.
func (e *env) serveLogger(f *flags) *slog.Logger {
	level := slog.LevelInfo
	if f.verbose {
		level = slog.LevelDebug
	}
	return e.newLogger(f, level)
}

// newServeRun builds the run; nothing starts yet.
func (e *env) newServeRun(f *flags, cat *host.Catalog, opts gateway.Options) (*serveRun, error) {
	log := e.serveLogger(f)
	reg := tool.NewRegistry()
	// Every file in use is watched; a change of one re-reads them all.
	h, err := host.New(host.Options{Catalog: cat, Registry: reg, Logger: log, Lookup: e.lookup,
		Parse: func(string, []byte) (*host.Plan, error) { return e.reloadPlan(f, cat) }})
	if err != nil {
		return nil, err
	}
	opts.Logger = log
	opts.Health = func() []gateway.BackendState {
		b := backendStates(h.Status())
		if s := storeState(context.Background(), e.keeper); s != nil {
			b = append(b, *s)
		}
		return b
	}
	opts.ServerOrder = func() []string { return serverOrder(h.Status()) }
	opts.NewView = sessionViews(cat, reg)
	code := &gatewayCode{}
	if f.codeMode {
		if opts, err = withCodeMode(opts, reg, code); err != nil {
			return nil, errors.Join(err, h.Close())
		}
	}
	r := &serveRun{e: e, f: f, log: log, h: h, reg: reg}
	// The console charts what the metrics observe: it wraps their Observer.
	if opts, err = r.withConsole(r.observe(opts, reg), cat); err != nil {
		return nil, errors.Join(err, h.Close())
	}
	r.opts = r.consoleCalls(e.withTraceContext(opts))
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
func (r *serveRun) run(ctx context.Context, src *source) error {
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
	runCtx, stop := context.WithCancelCause(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { r.applyAndWatch(runCtx, src, stop) })
	serveErr := r.serveTransport(runCtx, ln)
	stop(nil)
	stopMetrics()
	closeErr := errors.Join(r.gw.Close(), r.h.Close())
	wg.Wait()
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
func (r *serveRun) applyAndWatch(ctx context.Context, src *source, fail context.CancelCauseFunc) {
	_ = r.h.Apply(ctx, src.plan)
	if err := gatewayNotApplied(r.e.keeper, src.plan, r.h.Status()); err != nil && ctx.Err() == nil {
		fail(err)
	}
	if r.applied != nil {
		close(r.applied)
	}
	if len(src.files) == 0 || ctx.Err() != nil {
		return
	}
	var wg sync.WaitGroup
	for _, cf := range src.files {
		wg.Go(func() {
			if err := r.h.WatchFile(ctx, cf.path); err != nil && ctx.Err() == nil && !errors.Is(err, host.ErrClosed) {
				r.log.Error("mcpbridge: watching " + cf.path + ": " + err.Error())
			}
		})
	}
	wg.Wait()
}

// listen listens on serve's HTTP address; nil on stdio.
func (r *serveRun) listen() (net.Listener, error) {
	if r.f.stdio {
		return nil, nil
	}
	addr := r.f.httpAddr
	if addr == "" {
		addr = gateway.DefaultHTTPAddr
	}
	ln, err := gateway.Listen(addr, r.opts)
	if errors.Is(err, gateway.ErrNotLoopback) {
		err = usagef("serve: --http %s is not a loopback address, and no token is required: add --token-env NAME "+
			"(the variable holding the bearer token clients must send), or --insecure-no-auth-on-network to serve it without one", addr)
	}
	return ln, err
}

// serveTransport serves the gateway on ln, or on stdio when ln is nil,
// until ctx ends (or the stdio client leaves) and returns why it stopped.
func (r *serveRun) serveTransport(ctx context.Context, ln net.Listener) error {
	if ln == nil {
		return r.gw.ServeStdio(ctx, io.NopCloser(r.e.Stdin), nopWriteCloser{r.e.Stdout})
	}
	r.announce(ln.Addr())
	r.announceConsole(ln.Addr())
	if r.console != nil {
		// The console's live streams end with the run, so the server's
		// shutdown does not wait for them.
		defer context.AfterFunc(ctx, r.console.con.Close)()
	}
	return r.gw.ServeListener(ctx, ln)
}

// backendStates is /healthz's view of the host: no config, no secrets.
// Disabled entries are not backends: they neither count nor spoil the
// health.
func backendStates(statuses []host.Status) []gateway.BackendState {
	out := make([]gateway.BackendState, 0, len(statuses))
	for _, st := range statuses {
		if st.State == host.StateDisabled {
			continue
		}
		name := st.Name
		if name == "" {
			name = st.ID
		}
		out = append(out, gateway.NewBackendState(name, string(st.State), st.State == host.StateReady, st.Tools, st.Err))
	}
	return out
}

// serverOrder is the servers' names in config order: which server keeps a
// raw name two offer (serve --raw-names).
func serverOrder(statuses []host.Status) []string {
	out := make([]string, 0, len(statuses))
	for _, st := range statuses {
		out = append(out, st.Name)
	}
	return out
}

// withoutVar returns environ (nil: the process's) without the variable
// name.
func withoutVar(environ []string, name string) []string {
	if environ == nil {
		environ = os.Environ()
	}
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		if k, _, _ := strings.Cut(kv, "="); k != name {
			out = append(out, kv)
		}
	}
	return out
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
