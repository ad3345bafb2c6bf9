package metrics_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"go.uber.org/goleak"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/metrics"
	"github.com/mcpbridge/mcpbridge/tool"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestOutcome(t *testing.T) {
	fail := func(code string) tool.Result {
		return tool.Result{IsError: true, Error: &tool.ErrorInfo{Message: "x", Code: code}}
	}
	withWire := fail("")
	withWire.Wire = json.RawMessage(`{"isError":true,"content":[]}`)
	tests := []struct {
		name      string
		res       tool.Result
		cancelled bool
		want      string
	}{
		{"success", tool.Result{}, false, metrics.OutcomeOK},
		{"backend isError", withWire, false, metrics.OutcomeToolError},
		{"invalid arguments", fail(tool.CodeInvalidArguments), false, metrics.OutcomeToolError},
		{"invalid output", fail(tool.CodeInvalidToolOutput), false, metrics.OutcomeToolError},
		{"toolCallTimeoutMs", fail(tool.CodeTimeout), false, metrics.OutcomeTimeout},
		{"aborted", fail(tool.CodeAborted), false, metrics.OutcomeCancelled},
		{"aborted before dispatch", fail(tool.CodeAbortedBeforeDispatch), false, metrics.OutcomeCancelled},
		{"context ended first", withWire, true, metrics.OutcomeCancelled},
		{"server down", fail(""), false, metrics.OutcomeTransport},
		{"unknown tool", fail(tool.CodeUnknownTool), false, metrics.OutcomeTransport},
		{"no error info", tool.Result{IsError: true}, false, metrics.OutcomeTransport},
	}
	for _, tt := range tests {
		if got := metrics.Outcome(tt.res, tt.cancelled); got != tt.want {
			t.Errorf("%s: Outcome = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// The registry's metrics pass promlint (Prometheus naming conventions);
// the server metrics come from the statuses at scrape time, disabled
// entries left out and a serverName reported once.
func TestServerMetrics(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(tool.Tool{Name: "mcp__a__t", Origin: tool.Origin{Server: "a", Name: "t"},
		Execute: func(context.Context, json.RawMessage) (tool.Output, error) { return tool.Output{}, errors.New("down") }}); err != nil {
		t.Fatal(err)
	}
	m := metrics.New(metrics.Options{
		Tools: reg,
		Servers: func() []host.Status {
			return []host.Status{
				{ID: "a", Name: "a", State: host.StateReady, Tools: 1, Reconnects: 2},
				{ID: "a2", Name: "a", State: host.StateStarting},
				{ID: "off", State: host.StateDisabled},
			}
		},
		Sessions: func() int { return 3 },
	})
	res, _ := reg.Execute(context.Background(), "mcp__a__t", nil)
	m.CallStarted("mcp__a__t")(res, false)
	m.Request("tools/call")
	m.Request("made/up")

	text := scrapeText(t, m)
	for _, want := range []string{
		`mcpbridge_server_state{server="a",state="ready"} 1`,
		`mcpbridge_server_state{server="a",state="starting"} 0`,
		`mcpbridge_server_tools{server="a"} 1`,
		`mcpbridge_server_reconnects_total{server="a"} 2`,
		`mcpbridge_gateway_sessions 3`,
		`mcpbridge_tool_calls_total{outcome="transport",server="a"} 1`,
		`mcpbridge_tool_call_duration_seconds_count{server="a"} 1`,
		`mcpbridge_gateway_requests_total{method="other"} 1`,
		`mcpbridge_gateway_requests_total{method="tools/call"} 1`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("no %s in\n%s", want, text)
		}
	}
	if strings.Contains(text, `"off"`) || strings.Contains(text, "made/up") {
		t.Errorf("a disabled entry or an unknown method is reported:\n%s", text)
	}
	problems, err := promlint.New(strings.NewReader(text)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "mcpbridge_") {
			t.Errorf("promlint: %s: %s", p.Metric, p.Text)
		}
	}
}

// scrapeText is what m's handler serves a Prometheus scrape.
func scrapeText(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// BenchmarkCallStarted is what the metrics add to each call: one request
// counted, one call in flight, its latency and outcome; serially, and from
// concurrent callers, as a server's calls come.
func BenchmarkCallStarted(b *testing.B) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(tool.Tool{Name: "mcp__a__t", Origin: tool.Origin{Server: "a", Name: "t"},
		Execute: func(context.Context, json.RawMessage) (tool.Output, error) { return tool.Output{}, nil }}); err != nil {
		b.Fatal(err)
	}
	m := metrics.New(metrics.Options{Tools: reg})
	call := func() {
		m.Request("tools/call")
		m.CallStarted("mcp__a__t")(tool.Result{}, false)
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			call()
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(32)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				call()
			}
		})
	})
}

// Every state a backend can be in is in the state set: a server in any of
// them has its state at 1, one alone (an HTTP server waiting for
// `mcpbridge login` had every state at 0, so no alert on it fired).
func TestServerStateCoversEveryState(t *testing.T) {
	all := []host.State{host.StateStarting, host.StateReady, host.StateReconnecting, host.StateTimedOut,
		host.StateFailed, host.StateNeedsLogin, host.StateClosed}
	var statuses []host.Status
	for _, s := range all {
		statuses = append(statuses, host.Status{ID: string(s), Name: "s-" + string(s), State: s})
	}
	m := metrics.New(metrics.Options{Tools: tool.NewRegistry(), Servers: func() []host.Status { return statuses }})
	text := scrapeText(t, m)
	for _, s := range all {
		var ones []string
		for line := range strings.Lines(text) {
			if strings.HasPrefix(line, `mcpbridge_server_state{server="s-`+string(s)+`",`) && strings.HasSuffix(line, "} 1\n") {
				ones = append(ones, line)
			}
		}
		want := `mcpbridge_server_state{server="s-` + string(s) + `",state="` + string(s) + `"} 1` + "\n"
		if len(ones) != 1 || ones[0] != want {
			t.Errorf("a server %s has states at 1: %q, want %q", s, ones, want)
		}
	}
}
