package tracing_test

import (
	"context"
	"encoding/hex"
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"go.uber.org/goleak"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/tracing"
	"github.com/mcpbridge/mcpbridge/mcpclient"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func lookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}
}

// Without an OTLP endpoint nothing is set up.
func TestDisabled(t *testing.T) {
	for _, env := range []map[string]string{nil, {"OTEL_EXPORTER_OTLP_ENDPOINT": ""}, {"OTEL_SERVICE_NAME": "x"}} {
		tr, err := tracing.New(context.Background(), lookup(env))
		if tr != nil || err != nil {
			t.Errorf("New with %v = %v, %v; want nil, nil", env, tr, err)
		}
		if err := tr.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown of a nil Tracer = %v", err)
		}
	}
}

var traceparent = regexp.MustCompile(`^00-[0-9a-f]{32}-[0-9a-f]{16}-01$`)

// With an endpoint, each operation is a span exported over OTLP/HTTP, a
// failed one with its error, and a call's W3C trace context is injected.
func TestSpansReachTheReceiver(t *testing.T) {
	recv := mcptest.NewOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.URL) // the exporter reads the process's variables
	tr, err := tracing.New(context.Background(), lookup(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": recv.URL, "OTEL_SERVICE_NAME": "gw-test"}))
	if err != nil || tr == nil {
		t.Fatalf("New = %v, %v", tr, err)
	}
	if meta := tr.Inject(context.Background()); meta != nil {
		t.Errorf("Inject without a span = %v, want nil", meta)
	}
	ctx, end := tr.Start(context.Background(), mcpclient.OpCall, "a", "greet")
	meta := tr.Inject(ctx)
	if tp, _ := meta["traceparent"].(string); !traceparent.MatchString(tp) {
		t.Errorf("_meta = %v, want a W3C traceparent", meta)
	}
	end(nil)
	_, end = tr.Start(context.Background(), mcpclient.OpConnect, "b", "")
	end(errors.New("exec: not found"))
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}

	call := recv.Span("tools/call greet")
	if call == nil || call.GetKind() != tracepb.Span_SPAN_KIND_CLIENT || mcptest.Attr(call, "mcpbridge.server") != "a" ||
		mcptest.Attr(call, "gen_ai.tool.name") != "greet" || call.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("call span %v", call)
	}
	connect := recv.Span("mcpbridge connect")
	if connect == nil || connect.GetStatus().GetCode() != tracepb.Status_STATUS_CODE_ERROR || connect.GetStatus().GetMessage() != "exec: not found" {
		t.Errorf("failed connect span %v", connect)
	}
}

// A trace context sent in _meta is continued: the call's span joins the
// caller's trace as its child.
func TestExtract(t *testing.T) {
	recv := mcptest.NewOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.URL)
	tr, err := tracing.New(context.Background(), lookup(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": recv.URL}))
	if err != nil || tr == nil {
		t.Fatalf("New = %v, %v", tr, err)
	}
	ctx := context.Background()
	if got := tr.Extract(ctx, map[string]any{"progressToken": 1}); got != ctx {
		t.Error("Extract without a trace context changed the context")
	}
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	ctx = tr.Extract(ctx, map[string]any{"traceparent": "00-" + traceID + "-" + parentID + "-01"})
	_, end := tr.Start(ctx, mcpclient.OpCall, "a", "greet")
	end(nil)
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	span := recv.Span("tools/call greet")
	if span == nil || hex.EncodeToString(span.GetTraceId()) != traceID || hex.EncodeToString(span.GetParentSpanId()) != parentID {
		t.Errorf("span %v, want trace %s, parent %s", span, traceID, parentID)
	}
}

// A server's megabyte error text is cut where a span keeps it, in its
// status and its exception event: every failed call would otherwise ship
// it whole to the collector.
func TestErrorTextCut(t *testing.T) {
	recv := mcptest.NewOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.URL)
	tr, err := tracing.New(context.Background(), lookup(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": recv.URL}))
	if err != nil || tr == nil {
		t.Fatalf("New = %v, %v", tr, err)
	}
	huge := "MCP error -32603: " + strings.Repeat("é", 1<<19) // 1 MiB
	_, end := tr.Start(context.Background(), mcpclient.OpCall, "a", "greet")
	end(errors.New(huge))
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	span := recv.Span("tools/call greet")
	if span == nil {
		t.Fatal("no span")
	}
	const bound = 4 << 10
	msg := span.GetStatus().GetMessage()
	if span.GetStatus().GetCode() != tracepb.Status_STATUS_CODE_ERROR || len(msg) > bound || !utf8.ValidString(msg) ||
		!strings.HasPrefix(msg, "MCP error -32603: éé") || !strings.HasSuffix(msg, "…") {
		t.Errorf("status: code %v, %d bytes, starts %.40q, ends %q", span.GetStatus().GetCode(), len(msg), msg, msg[max(len(msg)-8, 0):])
	}
	events := span.GetEvents()
	if len(events) != 1 || events[0].GetName() != "exception" {
		t.Fatalf("events %v, want one exception", events)
	}
	for _, kv := range events[0].GetAttributes() {
		if v := kv.GetValue().GetStringValue(); len(v) > bound {
			t.Errorf("exception event %s holds %d bytes", kv.GetKey(), len(v))
		}
		if kv.GetKey() == "exception.message" && !strings.HasPrefix(kv.GetValue().GetStringValue(), "MCP error -32603: é") {
			t.Errorf("exception.message %.40q", kv.GetValue().GetStringValue())
		}
	}
}
