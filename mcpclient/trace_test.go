package mcpclient

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
)

// spanKey marks the context a recordingTracer started.
type spanKey struct{}

// recordingTracer records the operations it is told of, each as
// "op server detail", then "end op: <error or ok>".
type recordingTracer struct {
	mu  sync.Mutex
	ops []string
}

func (r *recordingTracer) record(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, s)
}

func (r *recordingTracer) Start(ctx context.Context, op, server, detail string) (context.Context, func(error)) {
	r.record(fmt.Sprintf("%s %s %s", op, server, detail))
	return context.WithValue(ctx, spanKey{}, op+":"+detail), func(err error) {
		outcome := "ok"
		if err != nil {
			outcome = err.Error()
		}
		r.record(fmt.Sprintf("end %s: %s", op, outcome))
	}
}

func (r *recordingTracer) Inject(ctx context.Context) map[string]any {
	if span, ok := ctx.Value(spanKey{}).(string); ok {
		return map[string]any{"traceparent": span}
	}
	return nil
}

// A Tracer is told of the connection, the tool sync and each call, with
// their outcomes; a call's trace context reaches the server in _meta.
func TestTracer(t *testing.T) {
	tr := &recordingTracer{}
	srv := mcppeer.Fixture(mcppeer.FixtureOptions{})
	rec := newWireRecorder(srv)
	h := mustStart(t, stdioConfig("fixture"), Options{NewTransport: inMemory(t, srv), Tracer: tr})
	h.call("mcp__fixture__greet", `{"name":"t"}`)
	if got := rec.last().Meta["traceparent"]; got != "call:greet" {
		t.Errorf("_meta.traceparent = %v, want the call's span", got)
	}
	h.call("mcp__fixture__fail", `{}`)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	want := []string{
		"connect fixture ", "end connect: ok",
		"sync fixture ", "end sync: ok",
		"call fixture greet", "end call: ok",
		"call fixture fail", "end call: Something went wrong",
	}
	if diff := cmp.Diff(want, tr.ops); diff != "" {
		t.Errorf("traced operations (-want +got):\n%s", diff)
	}
}
