package console

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/internal/metrics"
	"github.com/mcpbridge/mcpbridge/tool"
)

// rateMinutes is how far back the traffic page's charts reach: a bucket
// per minute.
const rateMinutes = 60

// maxRateTools bounds the charts: maxRateTools-1 tools each have their
// own, the calls of tools past them are counted together under
// otherTools, so memory stays bounded whatever names clients call. A tool
// without a call in the last hour gives its chart up to the next tool
// that needs one.
const maxRateTools = 100

// otherTools charts the calls of tools past maxRateTools.
const otherTools = "(other tools)"

// latencyBounds are the upper bounds of the latency classes a percentile
// is read from; a call slower than the last is in a class of its own.
var latencyBounds = [...]time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond,
	50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute,
}

// minute is one tool's calls in one minute: how many, how many did not
// end ok (metrics.Outcome), and their latencies by class.
type minute struct {
	at      int64 // unix minute the counts are of
	calls   uint32
	errors  uint32
	latency [len(latencyBounds) + 1]uint32
}

// toolRates is a ring of a tool's last rateMinutes minutes, and the
// minute of its last call.
type toolRates struct {
	ring   [rateMinutes]minute
	latest int64
}

// Rates is a gateway.Observer that keeps, per tool, its calls, errors and
// latencies of the last hour in fixed per-minute buckets, for the traffic
// page's charts, and passes every observation on to an inner Observer
// (serve's metrics). Memory is bounded: rateMinutes buckets for at most
// maxRateTools tools. Safe for concurrent use.
type Rates struct {
	inner gateway.Observer
	now   func() time.Time
	mu    sync.Mutex
	tools map[string]*toolRates
}

var _ gateway.Observer = (*Rates)(nil)

// NewRates returns Rates in front of inner (nil: none); now nil means
// time.Now.
func NewRates(inner gateway.Observer, now func() time.Time) *Rates {
	if now == nil {
		now = time.Now
	}
	return &Rates{inner: inner, now: now, tools: map[string]*toolRates{}}
}

// Request implements gateway.Observer: it is the inner Observer's alone.
func (r *Rates) Request(method string) {
	if r.inner != nil {
		r.inner.Request(method)
	}
}

// CallStarted implements gateway.Observer: the call is counted in its
// tool's current minute when it ends, with how it ended (as the metrics
// classify it) and how long it took.
func (r *Rates) CallStarted(name string) func(tool.Result, bool) {
	var inner func(tool.Result, bool)
	if r.inner != nil {
		inner = r.inner.CallStarted(name)
	}
	start := r.now()
	return func(res tool.Result, cancelled bool) {
		if inner != nil {
			inner(res, cancelled)
		}
		end := r.now()
		r.add(name, end, end.Sub(start), metrics.Outcome(res, cancelled) != metrics.OutcomeOK)
	}
}

func (r *Rates) add(name string, at time.Time, took time.Duration, failed bool) {
	m := at.Unix() / 60
	class, _ := slices.BinarySearch(latencyBounds[:], took)
	r.mu.Lock()
	defer r.mu.Unlock()
	tr := r.tools[name]
	if tr == nil {
		tr = r.slot(name, m)
	}
	tr.latest = m
	b := &tr.ring[m%rateMinutes]
	if b.at != m {
		*b = minute{at: m}
	}
	b.calls++
	if failed {
		b.errors++
	}
	b.latency[class]++
}

// slot is the ring that counts the calls of name, which has none, from
// minute m on: a new one while fewer than maxRateTools-1 tools have one;
// else the ring of a tool without a call in the hour up to m, whose
// chart is empty; else otherTools'. r.mu must be held.
func (r *Rates) slot(name string, m int64) *toolRates {
	named := len(r.tools)
	if r.tools[otherTools] != nil {
		named--
	}
	if named >= maxRateTools-1 {
		idle := r.idle(m)
		if idle == "" {
			name = otherTools
			if tr := r.tools[name]; tr != nil {
				return tr
			}
		} else {
			delete(r.tools, idle)
		}
	}
	tr := &toolRates{}
	r.tools[name] = tr
	return tr
}

// idle is a tool (not otherTools) without a call in the hour up to
// minute m; "" when every tool had one. r.mu must be held.
func (r *Rates) idle(m int64) string {
	for name, tr := range r.tools {
		if name != otherTools && tr.latest <= m-rateMinutes {
			return name
		}
	}
	return ""
}

// ToolRates is one tool's last hour, a minute per element, oldest first.
type ToolRates struct {
	Tool    string
	Minutes [rateMinutes]MinuteRates
	// Calls and Errors are the hour's totals; P50 and P95 its latency
	// percentiles (the upper bound of the class they fall in).
	Calls, Errors int
	P50, P95      time.Duration
}

// MinuteRates is one minute of a tool: its calls, the calls that did not
// end ok, and their latency percentiles (0 without calls).
type MinuteRates struct {
	Calls, Errors int
	P50, P95      time.Duration
}

// Snapshot returns each tool's last hour, by name, the tools without a
// call in it left out.
func (r *Rates) Snapshot() []ToolRates {
	now := r.now().Unix() / 60
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []ToolRates
	for name, tr := range r.tools {
		if t, ok := tr.last(now); ok {
			t.Tool = name
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b ToolRates) int { return strings.Compare(a.Tool, b.Tool) })
	return out
}

// last is the ring's minutes up to now, oldest first; ok is false when
// none of them had a call.
func (tr *toolRates) last(now int64) (ToolRates, bool) {
	var t ToolRates
	var hour [len(latencyBounds) + 1]uint32
	for i := range rateMinutes {
		m := now - rateMinutes + 1 + int64(i)
		b := &tr.ring[m%rateMinutes]
		if b.at != m || b.calls == 0 {
			continue
		}
		t.Minutes[i] = MinuteRates{Calls: int(b.calls), Errors: int(b.errors), P50: percentile(b.latency[:], 0.50), P95: percentile(b.latency[:], 0.95)}
		t.Calls += int(b.calls)
		t.Errors += int(b.errors)
		for c, n := range b.latency {
			hour[c] += n
		}
	}
	t.P50, t.P95 = percentile(hour[:], 0.50), percentile(hour[:], 0.95)
	return t, t.Calls > 0
}

// percentile is the upper bound of the latency class the q-th call falls
// in; past the last bound, twice the last bound. 0 without calls.
func percentile(classes []uint32, q float64) time.Duration {
	var total uint64
	for _, n := range classes {
		total += uint64(n)
	}
	if total == 0 {
		return 0
	}
	rank := uint64(q*float64(total) + 0.999999) // the ceiling: the q-th call, counted from 1
	var seen uint64
	for c, n := range classes {
		seen += uint64(n)
		if seen >= rank {
			if c < len(latencyBounds) {
				return latencyBounds[c]
			}
			break
		}
	}
	return 2 * latencyBounds[len(latencyBounds)-1]
}
