package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/tool"
)

// serve runs the gateway: every configured server's tools as one MCP
// server, over stdio or Streamable HTTP, kept live with hot reload, until
// the context ends (SIGINT/SIGTERM) or, on stdio, the client leaves.
func (e *env) serve(ctx context.Context, argv []string) error {
	f, err := parseFlags("serve", flagSpec{source: true, serve: true}, argv)
	if err != nil {
		return err
	}
	if f.help {
		fmt.Fprint(e.Stdout, usage)
		return nil
	}
	if len(f.args) > 0 {
		return usagef("serve: unexpected argument %q", f.args[0])
	}
	if f.stdio == f.http {
		return usagef("serve: say how to serve: --stdio, or --http [ADDR] (default %s)", gateway.DefaultHTTPAddr)
	}
	if f.stdio && (f.tokenEnv != "" || f.insecure || len(f.origins) > 0) {
		return usagef("serve: --token-env, --allow-origin and --insecure-no-auth-on-network go with --http")
	}
	opts := gateway.Options{AllowedOrigins: f.origins, InsecureAllowNonLoopback: f.insecure}
	if f.tokenEnv != "" {
		if opts.BearerToken = e.getenv(f.tokenEnv); opts.BearerToken == "" {
			return usagef("serve: --token-env %s: the variable is unset or empty", f.tokenEnv)
		}
		// The gateway's own credential is never a child's business,
		// whatever its name.
		e.Environ = withoutVar(e.Environ, f.tokenEnv)
	}
	cat := e.catalog(false)
	src, err := e.loadSource(f, cat)
	if err != nil {
		return err
	}

	// stdout may be the protocol: logs go to stderr, always.
	level := slog.LevelInfo
	if f.verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(e.Stderr, &slog.HandlerOptions{Level: level}))
	reg := tool.NewRegistry()
	h, err := host.New(host.Options{Catalog: cat, Registry: reg, Logger: log, Lookup: e.lookup})
	if err != nil {
		return err
	}
	opts.Logger = log
	opts.Health = func() []gateway.BackendState { return backendStates(h.Status()) }
	gw := gateway.New(reg, opts)

	// Serve at once; servers join as they become ready (clients get
	// list_changed), so the slowest server never delays the first answer.
	// Reloads start once the first plan is applied.
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		// Failures are logged by the host, entry by entry.
		_ = h.Apply(runCtx, src.plan)
		if src.path != "" && runCtx.Err() == nil {
			if err := h.WatchFile(runCtx, src.path); err != nil && runCtx.Err() == nil && !errors.Is(err, host.ErrClosed) {
				log.Error("mcpbridge: watching " + src.path + ": " + err.Error())
			}
		}
	})

	var serveErr error
	if f.stdio {
		serveErr = gw.ServeStdio(runCtx, io.NopCloser(e.Stdin), nopWriteCloser{e.Stdout})
	} else {
		addr := f.httpAddr
		if addr == "" {
			addr = gateway.DefaultHTTPAddr
		}
		ln, err := gateway.Listen(addr, opts)
		if err != nil {
			stop()
			wg.Wait()
			if errors.Is(err, gateway.ErrNotLoopback) {
				err = usagef("serve: %v", err)
			}
			return errors.Join(err, gw.Close(), h.Close())
		}
		fmt.Fprintf(e.Stderr, "mcpbridge: serving MCP on http://%s/mcp (health: /healthz)\n", ln.Addr())
		serveErr = gw.ServeListener(runCtx, ln)
	}
	stop()
	closeErr := errors.Join(gw.Close(), h.Close())
	wg.Wait()
	if serveErr != nil && !errors.Is(serveErr, context.Canceled) && !errors.Is(serveErr, gateway.ErrClosed) {
		return errors.Join(serveErr, closeErr)
	}
	if closeErr != nil {
		log.Warn("mcpbridge: shutdown: " + closeErr.Error())
	}
	return nil
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
