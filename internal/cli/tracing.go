package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/internal/tracing"
)

// tracingFlushTimeout bounds the export of the last spans at exit.
const tracingFlushTimeout = 5 * time.Second

// withTraceContext continues the trace context a gateway client sends in
// a call's _meta, when the run is traced.
func (e *env) withTraceContext(opts gateway.Options) gateway.Options {
	if t, ok := e.tracer.(*tracing.Tracer); ok {
		opts.CallContext = t.Extract
	}
	return opts
}

// startTracing traces the run with OpenTelemetry when the standard
// OTEL_EXPORTER_OTLP_ENDPOINT is set (nothing otherwise), and returns the
// function that exports the spans left at the end of the run.
func (e *env) startTracing(ctx context.Context) func() {
	t, err := tracing.New(ctx, e.LookupEnv)
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcpbridge: tracing is off: %v\n", err)
		return func() {}
	}
	if t == nil {
		return func() {}
	}
	e.tracer = t
	return func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tracingFlushTimeout)
		defer cancel()
		if err := t.Shutdown(ctx); err != nil {
			fmt.Fprintf(e.Stderr, "mcpbridge: %v\n", err)
		}
	}
}
