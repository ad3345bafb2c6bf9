// Package metrics is mcpbridge serve's Prometheus metrics: per backend
// server, its tool calls by outcome and their latency, its reconnects,
// state and tool count; for the gateway, its sessions, requests and calls
// in flight. It is fed through narrow hooks: the gateway's Observer (calls
// and requests, as they happen) and functions read at scrape time (the
// host's statuses, the gateway's session count), so neither the gateway
// nor the host knows of Prometheus.
//
// Calls are observed where the gateway hands them to tool.Registry.Execute:
// the one call path, where the result (with its tool.Result.Error.Code and
// the backend's wire result) says how the call ended, and the tool's
// tool.Origin names its server. Reconnects, state and tool counts come from
// host.Status at scrape time, so nothing is counted twice and no hook
// reaches into the MCP client.
package metrics

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/tool"
)

// Outcomes of a tool call, the values of the outcome label.
const (
	OutcomeOK        = "ok"         // the tool answered with a result that is not an error
	OutcomeToolError = "tool_error" // the backend answered isError, or the arguments or output were invalid
	OutcomeTimeout   = "timeout"    // the server's toolCallTimeoutMs passed
	OutcomeCancelled = "cancelled"  // the client cancelled, its session closed, or the gateway shut down
	OutcomeTransport = "transport"  // no result from the backend: not connected, connection lost, a protocol error
)

// Options say where the metrics read by each scrape come from. Nil
// functions report nothing.
type Options struct {
	// Tools resolves a called tool's name to its server
	// (tool.Origin.Server); nil labels every call with server "".
	Tools *tool.Registry
	// Servers returns the backends' statuses (host.Host.Status).
	Servers func() []host.Status
	// Sessions returns the number of open client sessions
	// (gateway.Gateway.Sessions).
	Sessions func() int
	// ReplicaConfigs returns the number of different configs the live
	// replicas apply (gateway.Gateway.ReplicaConfigs).
	ReplicaConfigs func() int
}

// Metrics holds one serve run's metrics in a registry of its own (no
// global state). Create it with New; its methods are safe for concurrent
// use.
type Metrics struct {
	reg      *prometheus.Registry
	tools    *tool.Registry
	calls    *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	requests *prometheus.CounterVec
	inFlight prometheus.Gauge
	refused  *prometheus.CounterVec
	store    *prometheus.CounterVec
	fallback prometheus.Counter

	// byMethod and byServer are the children of requests and of calls
	// and latency, resolved once: WithLabelValues hashes its labels and
	// looks the child up under a lock on every use, on every call's path.
	byMethod map[string]prometheus.Counter // knownMethods and "other"; read only
	byServer sync.Map                      // server label → *serverCalls
}

// serverCalls are one server's children of the call metrics.
type serverCalls struct {
	latency prometheus.Observer
	calls   map[string]prometheus.Counter // by outcome; read only
}

// outcomes are the values of the outcome label.
var outcomes = []string{OutcomeOK, OutcomeToolError, OutcomeTimeout, OutcomeCancelled, OutcomeTransport}

var _ gateway.Observer = (*Metrics)(nil)

// latencyBuckets reach from a cached answer to a long tool call (the
// default toolCallTimeoutMs is 60 s).
var latencyBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}

// New returns the metrics of one run, with the Go runtime's and the
// process's standard metrics besides.
func New(opts Options) *Metrics {
	m := &Metrics{
		reg:   prometheus.NewRegistry(),
		tools: opts.Tools,
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpbridge_tool_calls_total",
			Help: "Tool calls served, by backend server and outcome (ok, tool_error, timeout, cancelled, transport).",
		}, []string{"server", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcpbridge_tool_call_duration_seconds",
			Help:    "How long tool calls took, from the gateway handing them to the registry to their result, by backend server.",
			Buckets: latencyBuckets,
		}, []string{"server"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpbridge_gateway_requests_total",
			Help: "MCP requests received from clients, by JSON-RPC method (unknown methods as \"other\").",
		}, []string{"method"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcpbridge_gateway_calls_in_flight",
			Help: "Tool calls being served now.",
		}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpbridge_gateway_refused_total",
			Help: "Requests the gateway entry refused before any backend saw them, by reason (denied, rate_limited, unauthenticated, refused).",
		}, []string{"reason"}),
		store: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpbridge_store_calls_total",
			Help: "Calls to the gateway entry's store (Redis), by operation (ping, take, put_task, get_task, renew_tasks, release_tasks, drop_tasks, put_owner, get_owner, drop_owner, replica_secret, replica_config) and outcome (ok, error).",
		}, []string{"op", "outcome"}),
		fallback: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcpbridge_store_fallbacks_total",
			Help: "Calls whose rate limit this replica decided alone because the store failed or was resting after a failure.",
		}),
	}
	m.byMethod = make(map[string]prometheus.Counter, len(knownMethods)+1)
	for _, method := range knownMethods {
		m.byMethod[method] = m.requests.WithLabelValues(method)
	}
	m.byMethod["other"] = m.requests.WithLabelValues("other")
	m.reg.MustRegister(m.calls, m.latency, m.requests, m.inFlight, m.refused, m.store, m.fallback,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&serverCollector{servers: opts.Servers})
	if opts.Sessions != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "mcpbridge_gateway_sessions",
			Help: "Client sessions open now (stateless: requests being served).",
		}, func() float64 { return float64(opts.Sessions()) }))
	}
	if opts.ReplicaConfigs != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "mcpbridge_gateway_replica_configs",
			Help: "Different configs the live replicas sharing this replica's store apply, as it last read them: 1 when they agree, 0 when not known (no store).",
		}, func() float64 { return float64(opts.ReplicaConfigs()) }))
	}
	return m
}

// Handler serves the metrics in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Refused counts one request refused by the gateway entry (reason:
// denied, rate_limited, unauthenticated, refused).
func (m *Metrics) Refused(reason string) { m.refused.WithLabelValues(reason).Inc() }

// StoreCall counts one call to the store and its outcome.
func (m *Metrics) StoreCall(op string, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.store.WithLabelValues(op, outcome).Inc()
}

// StoreFallback counts one call whose rate limit was decided without the
// store.
func (m *Metrics) StoreFallback() { m.fallback.Inc() }

// Request counts one request of a client.
func (m *Metrics) Request(method string) {
	c, ok := m.byMethod[method]
	if !ok {
		// A client chooses the method: anything else is "other"
		// (bounded label values).
		c = m.byMethod["other"]
	}
	c.Inc()
}

// CallStarted counts a call in flight until the returned function reports
// how it ended.
func (m *Metrics) CallStarted(name string) func(tool.Result, bool) {
	server := ""
	if m.tools != nil {
		if t, ok := m.tools.Get(name); ok {
			server = t.Origin.Server
		}
	}
	sc := m.server(server)
	m.inFlight.Inc()
	start := sinceEpoch()
	return func(res tool.Result, cancelled bool) {
		m.inFlight.Dec()
		sc.latency.Observe((sinceEpoch() - start).Seconds())
		sc.calls[Outcome(res, cancelled)].Inc()
	}
}

// epoch is the reference of the calls' start and end readings.
var epoch = time.Now()

// sinceEpoch reads the monotonic clock alone: time.Now also reads the
// wall clock, which a latency does not use, on every call's path (and the
// function CallStarted returns keeps a Duration, smaller than a Time).
func sinceEpoch() time.Duration { return time.Since(epoch) }

// server returns the call metrics of server, resolved on its first call.
// Server names come from the configuration, so the cache is bounded.
func (m *Metrics) server(server string) *serverCalls {
	if sc, ok := m.byServer.Load(server); ok {
		return sc.(*serverCalls)
	}
	sc := &serverCalls{latency: m.latency.WithLabelValues(server), calls: make(map[string]prometheus.Counter, len(outcomes))}
	for _, o := range outcomes {
		sc.calls[o] = m.calls.WithLabelValues(server, o)
	}
	got, _ := m.byServer.LoadOrStore(server, sc)
	return got.(*serverCalls)
}

// Outcome classifies a finished call; cancelled means its context ended
// before the result.
func Outcome(res tool.Result, cancelled bool) string {
	if !res.IsError {
		return OutcomeOK
	}
	code := ""
	if res.Error != nil {
		code = res.Error.Code
	}
	switch {
	case cancelled, code == tool.CodeAborted, code == tool.CodeAbortedBeforeDispatch:
		return OutcomeCancelled
	case code == tool.CodeTimeout:
		return OutcomeTimeout
	case res.Wire != nil, code == tool.CodeInvalidArguments, code == tool.CodeInvalidToolOutput:
		return OutcomeToolError
	}
	return OutcomeTransport
}

// knownMethods are the request methods counted under their own name.
var knownMethods = []string{
	"initialize", "ping", "server/discover", "subscriptions/listen",
	"tools/list", "tools/call", "resources/list", "resources/templates/list",
	"resources/read", "resources/subscribe", "resources/unsubscribe",
	"prompts/list", "prompts/get", "completion/complete", "logging/setLevel",
}

// serverCollector reports each backend's state, tools and reconnects from
// host.Status at scrape time.
type serverCollector struct {
	servers func() []host.Status
}

var (
	stateDesc = prometheus.NewDesc("mcpbridge_server_state",
		"1 for the state the backend server is in, 0 for the others.", []string{"server", "state"}, nil)
	toolsDesc = prometheus.NewDesc("mcpbridge_server_tools",
		"Tools the backend server has registered.", []string{"server"}, nil)
	refusedDesc = prometheus.NewDesc("mcpbridge_server_config_refused",
		"1 while the backend server's config on disk was refused by the last reload and its previous config keeps running, else 0.", []string{"server"}, nil)
	reconnectsDesc = prometheus.NewDesc("mcpbridge_server_reconnects_total",
		"Reconnect attempts of the backend server since its instance started (a reload that replaces it starts again at 0).", []string{"server"}, nil)
)

// states are every state an enabled entry reports, for the state set: one
// left out has no series at 1, and alerts on it never fire.
var states = []host.State{host.StateStarting, host.StateReady, host.StateReconnecting,
	host.StateTimedOut, host.StateFailed, host.StateNeedsLogin, host.StateClosed}

func (c *serverCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- stateDesc
	ch <- toolsDesc
	ch <- reconnectsDesc
	ch <- refusedDesc
}

func (c *serverCollector) Collect(ch chan<- prometheus.Metric) {
	if c.servers == nil {
		return
	}
	seen := map[string]bool{}
	for _, st := range c.servers() {
		name := st.Name
		if name == "" {
			name = st.ID
		}
		// A disabled entry is no backend (its config is not even read);
		// a serverName handed over in a reload is reported once, by the
		// entry that comes first.
		if st.State == host.StateDisabled || seen[name] {
			continue
		}
		seen[name] = true
		for _, s := range states {
			v := 0.0
			if s == st.State {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(stateDesc, prometheus.GaugeValue, v, name, string(s))
		}
		ch <- prometheus.MustNewConstMetric(toolsDesc, prometheus.GaugeValue, float64(st.Tools), name)
		ch <- prometheus.MustNewConstMetric(reconnectsDesc, prometheus.CounterValue, float64(st.Reconnects), name)
		refused := 0.0
		if st.Refused != nil {
			refused = 1
		}
		ch <- prometheus.MustNewConstMetric(refusedDesc, prometheus.GaugeValue, refused, name)
	}
}
