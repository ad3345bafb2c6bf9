package gatewayrun

import (
	"context"
	"fmt"
	"net"
	"net/http"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/internal/metrics"
	"github.com/mcpbridge/mcpbridge/tool"
)

// observe adds the run's metrics to opts when they are served (over
// HTTP, or on Config.MetricsAddr): the gateway reports calls and requests
// to them and serves them at /metrics behind its own checks.
func (r *serveRun) observe(opts gateway.Options, reg *tool.Registry) gateway.Options {
	if r.cfg.Stdio && r.cfg.MetricsAddr == "" {
		return opts
	}
	r.metrics = metrics.New(metrics.Options{
		Tools:          reg,
		Servers:        r.h.Status,
		Sessions:       func() int { return r.gw.Sessions() }, // r.gw is set before anything is served
		ReplicaConfigs: func() int { return r.gw.ReplicaConfigs() },
	})
	opts.Observer = r.metrics
	if !r.cfg.Stdio {
		opts.Metrics = r.metrics.Handler()
	}
	return opts
}

// announce says where the gateway serves: a line for a person, or with
// JSONLogs a log record. While a gateway entry guards the run, every
// request is refused until it loads, so that line waits for the first
// apply, and is not said if the entry did not load (the run then ends);
// meanwhile a line says the gateway is starting there.
func (r *serveRun) announce(ctx context.Context, addr net.Addr) {
	url := fmt.Sprintf("http://%s/mcp", addr)
	if !r.keeper.Required() {
		r.announceServing(url)
		return
	}
	if r.cfg.JSONLogs {
		r.log.Info("starting: requests get 503 until the gateway entry has loaded", "listening", url)
	} else {
		fmt.Fprintf(r.cfg.Stderr, "mcpbridge: starting on %s: requests get 503 until the gateway entry has loaded\n", url)
	}
	r.bg.Go(func() {
		select {
		case <-r.applied:
		case <-ctx.Done():
		}
		// A gateway entry that did not load ended the run before applied.
		if ctx.Err() == nil && r.keeper.Current() != nil {
			r.announceServing(url)
		}
	})
}

func (r *serveRun) announceServing(url string) {
	if r.cfg.JSONLogs {
		r.log.Info("serving MCP", "url", url, "health", "/healthz", "metrics", r.metrics != nil)
		return
	}
	fmt.Fprintf(r.cfg.Stderr, "mcpbridge: serving MCP on %s (health: /healthz)\n", url)
}

// serveMetrics serves /metrics and the probes (/healthz, /readyz,
// /livez) alone on Config.MetricsAddr, without authentication, until the
// returned stop is called: a port only the scraper and the kubelet reach
// (their answers hold server names, states and counts, no secrets; a
// kubelet probe cannot send a bearer token kept in a Secret). Without
// MetricsAddr it does nothing.
func (r *serveRun) serveMetrics() (stop func(), err error) {
	addr := r.cfg.MetricsAddr
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
	if r.cfg.JSONLogs {
		r.log.Info("serving metrics", "url", fmt.Sprintf("http://%s/metrics", ln.Addr()))
	} else {
		fmt.Fprintf(r.cfg.Stderr, "mcpbridge: serving metrics on http://%s/metrics\n", ln.Addr())
	}
	return func() {
		cancel()
		<-done
	}, nil
}
