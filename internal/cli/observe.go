package cli

import (
	"log/slog"
	"net"
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
