package cli

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/configsource"
	"github.com/mcpbridge/mcpbridge/internal/gatewayauth"
	"github.com/mcpbridge/mcpbridge/internal/gatewayrun"
	gatewaykind "github.com/mcpbridge/mcpbridge/internal/kinds/gateway"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
)

// consoleTokenVar holds the console's token; serveConfig takes it out of
// the children's environment.
const consoleTokenVar = gatewayrun.ConsoleTokenVar

// serve runs the gateway: every configured server's tools as one MCP
// server, over stdio or Streamable HTTP, kept live with hot reload, until
// the context ends (StopSignals) or, on stdio, the client leaves.
func (e *env) serve(ctx context.Context, argv []string) error {
	f, err := parseFlags("serve", specOf("serve"), argv)
	if err != nil {
		return err
	}
	cfg, err := e.serveConfig(f)
	if err != nil {
		return err
	}
	return serveError(f, gatewayrun.Run(ctx, cfg))
}

// serveError is the run's error as the command reports it: an address
// refused is a usage error saying what to add, an invalid gateway entry
// a config error.
func serveError(f *flags, err error) error {
	if errors.Is(err, gateway.ErrNotLoopback) {
		addr := f.httpAddr
		if addr == "" {
			addr = gateway.DefaultHTTPAddr
		}
		return usagef("serve: --http %s is not a loopback address, and no token is required: add --token-env NAME "+
			"(the variable holding the bearer token clients must send), or --insecure-no-auth-on-network to serve it without one", addr)
	}
	if _, ok := errors.AsType[*gatewayrun.GatewayEntryError](err); ok {
		return &configError{err}
	}
	return err
}

// gatewayKind is the config's gateway entry kind: applied to serve's
// Keeper, ignored by the other commands (no Keeper).
func (e *env) gatewayKind() *gatewaykind.Kind { return gatewaykind.NewKind(e.keeper) }

// checkServeFlags checks serve's command line beyond what parseFlags does.
func checkServeFlags(f *flags) error {
	if len(f.args) > 0 {
		if f.http && f.httpAddr == "" {
			// --http takes what follows only when it has a port.
			return usagef("serve: unexpected argument %q: --http takes an address with its port (--http 127.0.0.1:8080, --http :8080)", f.args[0])
		}
		return usagef("serve: unexpected argument %q", f.args[0])
	}
	switch {
	case f.stdio && f.http:
		return usagef("serve: --stdio and --http cannot be used together: serve one way per process")
	case !f.stdio && !f.http:
		return usagef("serve: say how to serve: --stdio, or --http [ADDR] (default %s)", gateway.DefaultHTTPAddr)
	}
	if f.stdio && (f.tokenEnv != "" || f.insecure || len(f.origins) > 0 || f.console) {
		return usagef("serve: --token-env, --allow-origin, --insecure-no-auth-on-network and --console go with --http")
	}
	if _, err := readyTimeout(f.readyTimeout); err != nil {
		return err
	}
	return checkOrigins(f.origins)
}

// checkOrigins refuses an --allow-origin that could never allow a
// browser, or would allow any web page (gateway.CheckAllowedOrigin).
func checkOrigins(origins []string) error {
	for _, o := range origins {
		if err := gateway.CheckAllowedOrigin(o); err != nil {
			return usagef("serve: --allow-origin %q: %v", o, err)
		}
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

// serveConfig checks serve's flags and turns them into the run's Config.
// The --token-env and console token variables leave the environment the
// children inherit.
func (e *env) serveConfig(f *flags) (gatewayrun.Config, error) {
	if err := checkServeFlags(f); err != nil {
		return gatewayrun.Config{}, err
	}
	opts := gateway.Options{AllowedOrigins: f.origins, InsecureAllowNonLoopback: f.insecure, RawNames: f.rawNames, Stateless: f.ops.stateless}
	if f.tokenEnv != "" {
		if !yamlconf.IsVarName(f.tokenEnv) {
			return gatewayrun.Config{}, usagef("serve: --token-env takes the name of the variable that holds the token, not the token: export MCPBRIDGE_TOKEN=… and pass --token-env MCPBRIDGE_TOKEN")
		}
		if opts.BearerToken = e.getenv(f.tokenEnv); opts.BearerToken == "" {
			return gatewayrun.Config{}, usagef("serve: --token-env %s: the variable is unset or empty", f.tokenEnv)
		}
		// The gateway's own credential is never a child's business,
		// whatever its name.
		e.Environ = withoutVar(e.Environ, f.tokenEnv)
	}
	// The console's token is never a child's business, whether or not
	// the console is on (the gateway entry may turn it on).
	e.Environ = withoutVar(e.Environ, consoleTokenVar)
	ready, _ := readyTimeout(f.readyTimeout) // checked by checkServeFlags
	last := &lastSource{}                    // whose files' locks Prepare loads, and a reload reads
	return gatewayrun.Config{
		Gateway: e.withTraceContext(opts), Stdio: f.stdio, HTTPAddr: f.httpAddr, ReadyTimeout: ready,
		CodeMode: f.codeMode, Console: f.console, ConsoleToken: e.getenv(consoleTokenVar),
		MetricsAddr: f.ops.metricsAddr, JSONLogs: f.ops.logFormat == "json",
		Logger: e.serveLogger(f), Stdin: e.Stdin, Stdout: e.Stdout, Stderr: e.Stderr, Lookup: e.lookup,
		Catalog: func(k *gatewayauth.Keeper) *host.Catalog {
			e.keeper = k
			return e.catalogOAuth(false, e.oauthOptions(f))
		},
		Load: func(cat *host.Catalog) (gatewayrun.Source, error) {
			src, err := e.loadSource(f, cat)
			if err != nil {
				return gatewayrun.Source{}, err
			}
			last.src = src // before anything runs: no reload yet
			return gatewayrun.Source{Plan: src.plan, Files: configsource.Paths(src.files)}, nil
		},
		Prepare: func(gatewayrun.Source) error { return e.loadPins(last.src, f, true) },
		Reload:  func(cat *host.Catalog) (*host.Plan, error) { return e.reloadPlan(last, cat) },
		Files:   last.files,
	}, nil
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
