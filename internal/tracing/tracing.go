// Package tracing is mcpbridge's OpenTelemetry: a span per connection
// attempt, tool sync and tool call of each MCP server, exported over
// OTLP/HTTP when the standard OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) variable is set, and the W3C trace
// context of a call carried to its server in the request's _meta
// ("traceparent", "tracestate"), as MCP's _meta allows; a trace context
// a client of the gateway sent in _meta is continued (Extract). Without the
// variable, New returns nil and nothing is traced: the MCP client sees no
// tracer and pays one nil check per operation.
//
// It is the one package that imports OpenTelemetry; the MCP client knows
// only its small mcpclient.Tracer interface.
package tracing

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpbridge/mcpbridge/internal/buildinfo"
	"github.com/mcpbridge/mcpbridge/internal/textcut"
	"github.com/mcpbridge/mcpbridge/mcpclient"
)

// Tracer traces MCP servers' operations into an OTLP exporter. Create it
// with New and flush it with Shutdown; its methods are safe for concurrent
// use.
type Tracer struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	prop     propagation.TraceContext
}

var _ mcpclient.Tracer = (*Tracer)(nil)

// Enabled reports whether lookup (os.LookupEnv) names an OTLP endpoint.
func Enabled(lookup func(string) (string, bool)) bool {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
		if v, ok := lookup(k); ok && v != "" {
			return true
		}
	}
	return false
}

// New returns a Tracer exporting over OTLP/HTTP (protobuf) as the standard
// OTEL_EXPORTER_OTLP_* variables of the process configure it (endpoint,
// headers, timeout, …), or nil when lookup names no endpoint (Enabled).
// service.name is OTEL_SERVICE_NAME or "mcpbridge".
func New(ctx context.Context, lookup func(string) (string, bool)) (*Tracer, error) {
	if !Enabled(lookup) {
		return nil, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: the OTLP exporter: %w", err)
	}
	name := "mcpbridge"
	if v, ok := lookup("OTEL_SERVICE_NAME"); ok && v != "" {
		name = v
	}
	res := resource.NewSchemaless(semconv.ServiceName(name), semconv.ServiceVersion(buildinfo.Version))
	provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracer{provider: provider, tracer: provider.Tracer("github.com/mcpbridge/mcpbridge")}, nil
}

// Start begins a span for op of server: "connect", "sync", or "call" of
// the tool detail (spans named as MCP's semantic conventions name them,
// "tools/call <tool>"). end records err and ends the span.
func (t *Tracer) Start(ctx context.Context, op, server, detail string) (context.Context, func(error)) {
	name, kind := "mcpbridge "+op, trace.SpanKindInternal
	attrs := []attribute.KeyValue{attribute.String("mcpbridge.server", server)}
	switch op {
	case mcpclient.OpCall:
		name, kind = "tools/call "+detail, trace.SpanKindClient
		attrs = append(attrs, attribute.String("mcp.method.name", "tools/call"), attribute.String("gen_ai.tool.name", detail))
	case mcpclient.OpSync:
		attrs = append(attrs, attribute.String("mcp.method.name", "tools/list"))
	}
	ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	return ctx, func(err error) {
		if err != nil {
			// A server sizes its error text: cut, a span stays small
			// (RecordError would keep it whole).
			text := textcut.Peer(err.Error())
			span.AddEvent(semconv.ExceptionEventName, trace.WithAttributes(
				semconv.ExceptionType(fmt.Sprintf("%T", err)), semconv.ExceptionMessage(text)))
			span.SetStatus(codes.Error, text)
		}
		span.End()
	}
}

// Inject returns the W3C trace context of ctx's span as _meta entries
// ("traceparent", and "tracestate" when there is one); nil without a
// span.
func (t *Tracer) Inject(ctx context.Context) map[string]any {
	carrier := propagation.MapCarrier{}
	t.prop.Inject(ctx, carrier)
	if len(carrier) == 0 {
		return nil
	}
	meta := make(map[string]any, len(carrier))
	for k, v := range carrier {
		meta[k] = v
	}
	return meta
}

// Extract returns ctx carrying the W3C trace context of a request's _meta
// ("traceparent", "tracestate"), so the spans of the call it starts join
// the caller's trace; ctx itself when meta has none.
func (t *Tracer) Extract(ctx context.Context, meta map[string]any) context.Context {
	carrier := propagation.MapCarrier{}
	for _, k := range t.prop.Fields() {
		if v, ok := meta[k].(string); ok {
			carrier[k] = v
		}
	}
	if len(carrier) == 0 {
		return ctx
	}
	return t.prop.Extract(ctx, carrier)
}

// Shutdown exports the spans not sent yet and stops the exporter, within
// ctx. A nil Tracer does nothing.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	if err := t.provider.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("tracing: flushing spans: %w", err)
	}
	return nil
}
