package cli

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// scrape fetches a /metrics URL (with token when not empty) and parses it
// with the Prometheus text parser.
func scrape(t *testing.T, url, token string) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing %s: %v", url, err)
	}
	return families
}

// sample returns the value of the sample of family whose labels include
// labels (name=value pairs): a counter's or gauge's value, a histogram's
// sample count; -1 when there is none.
func sample(families map[string]*dto.MetricFamily, family string, labels ...string) float64 {
	f := families[family]
	if f == nil {
		return -1
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// fixtureEntryWith is one fixture server entry with extra config lines.
func fixtureEntryWith(t *testing.T, serverName, extra string) string {
	return strings.Replace(fixtureEntries(t, serverName), "    transport: stdio\n", "    transport: stdio\n"+extra, 1)
}

// serve --http serves /metrics behind its token and, with --metrics-addr,
// on a listener of its own; after real calls of every outcome through the
// gateway, the Prometheus text parser reads counters, a histogram and
// gauges that moved. With --log-format json every stderr line is a JSON
// log record.
func TestServeMetrics(t *testing.T) {
	// A short call timeout, and a reconnect delay long enough that the
	// server stays down (its tools registered) after it crashes.
	cfg := writeConfig(t, fixtureEntryWith(t, "a", "    toolCallTimeoutMs: 500\n"+
		"    reconnect: {enabled: true, initialDelayMs: 60000, maxDelayMs: 60000, maxAttempts: 3}\n"))
	p := startServing(t, []string{"GW_AUTH=s3cret"}, "serve", "--http", "127.0.0.1:0", "--config", cfg,
		"--token-env", "GW_AUTH", "--metrics-addr", "127.0.0.1:0", "--log-format", "json")
	if p.metricsURL == "" {
		t.Fatalf("no metrics listener announced:\n%s", p.stderr)
	}
	metricsURL := p.base() + "/metrics"
	resp, err := http.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/metrics without the token: %s, want 401", resp.Status)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// A 2025-11-25 client, which holds a session (the sessions gauge counts
	// it); a 2026-07-28 one is served request by request.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: p.url, HTTPClient: &http.Client{Transport: bearer{"s3cret"}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	waitTools(t, cs, "mcp__a__greet")
	for _, c := range []struct{ tool, args string }{
		{"greet", `{"name":"x"}`}, {"greet", `{"name":"y"}`}, // ok
		{"fail", `{}`},           // tool_error
		{"slow", `{"ms":20000}`}, // timeout (500 ms)
	} {
		callText(t, cs, "mcp__a__"+c.tool, c.args)
	}

	// A call the client cancels while it is in flight.
	callCtx, cancelCall := context.WithCancel(ctx)
	go cs.CallTool(callCtx, &mcp.CallToolParams{Name: "mcp__a__slow", Arguments: json.RawMessage(`{"ms":20000}`)})
	mcptest.Eventually(t, 20*time.Second, func() bool {
		return sample(scrape(t, metricsURL, "s3cret"), "mcpbridge_gateway_calls_in_flight") == 1
	}, "one call in flight")
	cancelCall()
	mcptest.Eventually(t, 20*time.Second, func() bool {
		return sample(scrape(t, metricsURL, "s3cret"), "mcpbridge_tool_calls_total", "outcome", "cancelled") == 1
	}, "the cancelled call counted")

	// The server crashes after answering (ok), stays down, and the next
	// call fails at once (transport).
	callText(t, cs, "mcp__a__crash", `{}`)
	mcptest.Eventually(t, 20*time.Second, func() bool {
		return sample(scrape(t, metricsURL, "s3cret"), "mcpbridge_server_state", "server", "a", "state", "reconnecting") == 1
	}, "server a reconnecting")
	if _, isErr := callText(t, cs, "mcp__a__greet", `{"name":"z"}`); !isErr {
		t.Error("a call to a server that is down succeeded")
	}

	for _, url := range []string{metricsURL, p.metricsURL} {
		checkMetrics(t, scrape(t, url, "s3cret"))
	}
	// The probes on the metrics listener need no token: /readyz is 200 as
	// the first start has settled, /healthz 503 as server a is down.
	for path, want := range map[string]int{"/readyz": 200, "/livez": 200, "/healthz": 503} {
		resp, err := http.Get(strings.TrimSuffix(p.metricsURL, "/metrics") + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s on the metrics listener: %d, want %d", path, resp.StatusCode, want)
		}
	}
	cs.Close()
	p.stop(t)
	checkJSONLog(t, p.stderr.String(), "serving MCP")
}

// checkMetrics checks what TestServeMetrics's calls must have counted.
func checkMetrics(t *testing.T, families map[string]*dto.MetricFamily) {
	t.Helper()
	for _, c := range []struct {
		family string
		labels []string
		want   float64
	}{
		{"mcpbridge_tool_calls_total", []string{"server", "a", "outcome", "ok"}, 3},
		{"mcpbridge_tool_calls_total", []string{"server", "a", "outcome", "tool_error"}, 1},
		{"mcpbridge_tool_calls_total", []string{"server", "a", "outcome", "timeout"}, 1},
		{"mcpbridge_tool_calls_total", []string{"server", "a", "outcome", "cancelled"}, 1},
		{"mcpbridge_tool_calls_total", []string{"server", "a", "outcome", "transport"}, 1},
		{"mcpbridge_tool_call_duration_seconds", []string{"server", "a"}, 7},
		{"mcpbridge_gateway_requests_total", []string{"method", "tools/call"}, 7},
		{"mcpbridge_gateway_calls_in_flight", nil, 0},
		{"mcpbridge_gateway_sessions", nil, 1},
		{"mcpbridge_server_state", []string{"server", "a", "state", "reconnecting"}, 1},
		{"mcpbridge_server_state", []string{"server", "a", "state", "ready"}, 0},
		{"mcpbridge_server_reconnects_total", []string{"server", "a"}, 1},
	} {
		if got := sample(families, c.family, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.family, c.labels, got, c.want)
		}
	}
	if got := sample(families, "mcpbridge_server_tools", "server", "a"); got < 5 {
		t.Errorf("mcpbridge_server_tools{server=a} = %v, want the fixture's tools", got)
	}
	// The histogram's buckets moved: the timed-out call took 500 ms.
	for _, m := range families["mcpbridge_tool_call_duration_seconds"].GetMetric() {
		if s := m.GetHistogram().GetSampleSum(); s < 0.5 {
			t.Errorf("call latencies sum to %vs, want at least the 0.5 s timeout", s)
		}
	}
}

var toolsSummary = regexp.MustCompile(`^\d+ tools from \d+ of \d+ servers$`)

// checkJSONLog checks that every line of a --log-format json stderr is a
// slog JSON record (but for the command's own summary, "N tools from …"),
// and that one has the message msg.
func checkJSONLog(t *testing.T, stderr, msg string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	for _, line := range lines {
		if toolsSummary.MatchString(line) {
			continue
		}
		var rec struct {
			Time, Level, Msg string
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Time == "" || rec.Level == "" || rec.Msg == "" {
			t.Errorf("stderr line is no JSON log record (%v): %s", err, line)
		}
	}
	if !strings.Contains(stderr, `"msg":"`+msg+`"`) {
		t.Errorf("the JSON log lacks a %q record:\n%s", msg, stderr)
	}
}

func TestOpsFlagsUsage(t *testing.T) {
	tests := []struct {
		args []string
		has  string
	}{
		{[]string{"tools", "--log-format", "xml"}, `--log-format "xml": want text or json`},
		{[]string{"serve", "--stdio", "--stateless"}, "--stateless goes with --http"},
		{[]string{"serve", "--http", "--metrics-addr", "9090"}, `--metrics-addr "9090": want host:port`},
		{[]string{"call", "--stateless", "x"}, "unknown flag --stateless"},
	}
	for _, tc := range tests {
		r := mcpbridge(t, "", tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.has) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.has)
		}
	}
}

// tools -v --log-format json logs the servers' lines as JSON records.
func TestLogFormatJSON(t *testing.T) {
	t.Chdir(t.TempDir())
	r := mcpbridge(t, "", "tools", "-v", "--log-format", "json")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	checkJSONLog(t, r.stderr, "applied")
}

// With OTEL_EXPORTER_OTLP_ENDPOINT set, `mcpbridge call` sends the spans
// of its server's connection, tool sync and call to the OTLP receiver
// before it exits.
func TestCallTracedOverOTLP(t *testing.T) {
	recv := mcptest.NewOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", recv.URL)
	cfg := writeConfig(t, fixtureEntries(t, "a"))
	r := mcpbridge(t, "", "call", "--config", cfg, "mcp__a__greet", `{"name":"otel"}`)
	if r.code != ExitOK || r.stdout != "Hello, otel!\n" {
		t.Fatalf("call: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	for _, name := range []string{"tools/call greet", "mcpbridge connect", "mcpbridge sync"} {
		span := recv.Span(name)
		if span == nil || mcptest.Attr(span, "mcpbridge.server") != "a" {
			t.Errorf("span %q: %v (received %d spans)", name, span, len(recv.Spans()))
		}
	}
}

// serve continues the trace a client sends in a call's _meta: the span of
// the call to the backend is a child of the client's span, in its trace.
func TestServeContinuesClientTrace(t *testing.T) {
	recv := mcptest.NewOTLPReceiver(t)
	cfg := writeConfig(t, fixtureEntries(t, "a"))
	p := startServing(t, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + recv.URL}, "serve", "--http", "127.0.0.1:0", "--config", cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "traced", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: p.url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitTools(t, cs, "mcp__a__greet")
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__greet", Arguments: json.RawMessage(`{"name":"t"}`),
		Meta: mcp.Meta{"traceparent": "00-" + traceID + "-" + parentID + "-01"}}); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	p.stop(t) // exports the spans left
	span := recv.Span("tools/call greet")
	if span == nil || hex.EncodeToString(span.GetTraceId()) != traceID || hex.EncodeToString(span.GetParentSpanId()) != parentID {
		t.Errorf("call span %v, want trace %s and parent %s\n%s", span, traceID, parentID, p.stderr)
	}
}
