package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/internal/metrics"
	"github.com/mcpbridge/mcpbridge/tool"
)

// opsFlags are the flags for running mcpbridge in operations: log format,
// metrics, stateless serving.
type opsFlags struct {
	logFormat   string // --log-format: "", "text" or "json"
	metricsAddr string // --metrics-addr: a listener of its own for /metrics
	stateless   bool   // --stateless
}

// checkOpsFlags checks the operations flags of cmd's command line.
func checkOpsFlags(cmd string, f *flags) error {
	switch f.ops.logFormat {
	case "", "text", "json":
	default:
		return usagef("%s: --log-format %q: want text or json", cmd, f.ops.logFormat)
	}
	if f.ops.stateless && f.stdio {
		return usagef("serve: --stateless goes with --http (a stdio client is one session by nature)")
	}
	if f.ops.metricsAddr != "" {
		if _, _, err := net.SplitHostPort(f.ops.metricsAddr); err != nil {
			return usagef("serve: --metrics-addr %q: want host:port (e.g. 127.0.0.1:9464)", f.ops.metricsAddr)
		}
	}
	return nil
}

// newLogger is a run's log on stderr at level, as text or, with
// --log-format json, one JSON object per line (slog's JSONHandler) for log
// collectors.
func (e *env) newLogger(f *flags, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if f.ops.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(e.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(e.Stderr, opts))
}

// observe adds the run's metrics to opts when they are served (serve
// --http, or --metrics-addr): the gateway reports calls and requests to
// them and serves them at /metrics behind its own checks.
func (r *serveRun) observe(opts gateway.Options, reg *tool.Registry) gateway.Options {
	if !r.f.http && r.f.ops.metricsAddr == "" {
		return opts
	}
	r.metrics = metrics.New(metrics.Options{
		Tools:    reg,
		Servers:  r.h.Status,
		Sessions: func() int { return r.gw.Sessions() }, // r.gw is set before anything is served
	})
	opts.Observer = r.metrics
	if r.f.http {
		opts.Metrics = r.metrics.Handler()
	}
	return opts
}

// announce says where the gateway serves: a line for a person, or with
// --log-format json a log record.
func (r *serveRun) announce(addr net.Addr) {
	if r.f.ops.logFormat == "json" {
		r.log.Info("serving MCP", "url", fmt.Sprintf("http://%s/mcp", addr), "health", "/healthz", "metrics", r.metrics != nil)
		return
	}
	fmt.Fprintf(r.e.Stderr, "mcpbridge: serving MCP on http://%s/mcp (health: /healthz)\n", addr)
}

// serveMetrics serves /metrics and the probes (/healthz, /readyz,
// /livez) alone on --metrics-addr, without authentication, until the
// returned stop is called: a port only the scraper and the kubelet reach
// (their answers hold server names, states and counts, no secrets; a
// kubelet probe cannot send a bearer token kept in a Secret). Without
// --metrics-addr it does nothing.
func (r *serveRun) serveMetrics() (stop func(), err error) {
	addr := r.f.ops.metricsAddr
	if addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return func() {}, fmt.Errorf("serve: --metrics-addr: listening on %q: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", r.metrics.Handler())
	probes := r.gw.Probes()
	for _, path := range []string{"/healthz", "/readyz", "/livez"} {
		mux.Handle(path, probes)
	}
	// The gateway's edge: a scraper or a kubelet is never locked out by
	// silent sockets or big headers on this port either.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := r.gw.ServeReadOnly(ctx, ln, mux); err != nil {
			r.log.Error("serving metrics failed", "addr", addr, "err", err)
		}
	}()
	if r.f.ops.logFormat == "json" {
		r.log.Info("serving metrics", "url", fmt.Sprintf("http://%s/metrics", ln.Addr()))
	} else {
		fmt.Fprintf(r.e.Stderr, "mcpbridge: serving metrics on http://%s/metrics\n", ln.Addr())
	}
	return func() {
		cancel()
		<-done
	}, nil
}
