package console

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// clock is a time a test moves by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// counting is an inner Observer that counts what reaches it.
type counting struct {
	mu              sync.Mutex
	requests, calls int
}

func (o *counting) Request(string) { o.mu.Lock(); o.requests++; o.mu.Unlock() }
func (o *counting) CallStarted(string) func(tool.Result, bool) {
	return func(tool.Result, bool) { o.mu.Lock(); o.calls++; o.mu.Unlock() }
}

// call observes one call of name that takes took and fails or not.
func call(r *Rates, c *clock, name string, took time.Duration, failed bool) {
	end := r.CallStarted(name)
	c.add(took)
	end(tool.Result{IsError: failed}, false)
}

// Rates count each tool's calls, errors and latency percentiles by
// minute, forget what is older than an hour, and pass every observation
// on to the metrics' Observer.
func TestRates(t *testing.T) {
	c := &clock{t: time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)}
	inner := &counting{}
	r := NewRates(inner, c.now)
	call(r, c, "old", time.Millisecond, false) // 10:00, gone after an hour
	c.add(30 * time.Minute)
	for i := range 20 {
		// 18 fast calls, 2 slow ones (95th percentile: the 19th call).
		took := 3 * time.Millisecond
		if i >= 18 {
			took = 400 * time.Millisecond
		}
		call(r, c, "get-sum", took, i%10 == 0)
	}
	c.add(time.Minute)
	call(r, c, "get-sum", 40*time.Millisecond, false)
	r.Request("tools/list")
	c.add(30*time.Minute + time.Second) // 11:01: "old"'s minute is past the hour
	got := r.Snapshot()
	if len(got) != 1 || got[0].Tool != "get-sum" {
		t.Fatalf("Snapshot has %v, want get-sum alone", names(got))
	}
	g := got[0]
	want := struct {
		Calls, Errors int
		P50, P95      time.Duration
		Busy          MinuteRates
		Next          MinuteRates
	}{21, 2, 5 * time.Millisecond, 500 * time.Millisecond,
		MinuteRates{Calls: 20, Errors: 2, P50: 5 * time.Millisecond, P95: 500 * time.Millisecond},
		MinuteRates{Calls: 1, P50: 50 * time.Millisecond, P95: 50 * time.Millisecond}}
	have := want
	have.Calls, have.Errors, have.P50, have.P95 = g.Calls, g.Errors, g.P50, g.P95
	// The hour ending in 11:01 starts at 10:02: 10:30 is its 29th minute.
	have.Busy, have.Next = g.Minutes[28], g.Minutes[29]
	if d := cmp.Diff(want, have); d != "" {
		t.Errorf("get-sum's hour (-want +got):\n%s", d)
	}
	if inner.calls != 22 || inner.requests != 1 {
		t.Errorf("the inner Observer saw %d calls and %d requests, want 22 and 1", inner.calls, inner.requests)
	}
}

// However many tools clients call, at most maxRateTools are charted apart;
// the calls of the rest are counted together.
func TestRatesBounded(t *testing.T) {
	c := &clock{t: time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)}
	r := NewRates(nil, c.now)
	for i := range maxRateTools + 50 {
		call(r, c, fmt.Sprintf("tool-%03d", i), time.Millisecond, false)
	}
	got := r.Snapshot()
	if len(got) != maxRateTools {
		t.Fatalf("%d tools charted, want %d", len(got), maxRateTools)
	}
	if got[0].Tool != otherTools || got[0].Calls != 51 {
		t.Errorf("first chart %s with %d calls, want %s with the 51 calls past the bound", got[0].Tool, got[0].Calls, otherTools)
	}
}

func names(rs []ToolRates) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Tool)
	}
	return strings.Join(out, ", ")
}

// A tool without a call in the last hour gives up its chart to a tool
// called now: the bound does not fill for good with tools called once,
// long ago. A tool called within the hour keeps its chart.
func TestRatesFreeIdleTools(t *testing.T) {
	c := &clock{t: time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)}
	r := NewRates(nil, c.now)
	for i := range maxRateTools + 10 {
		call(r, c, fmt.Sprintf("tool-%03d", i), time.Millisecond, false)
	}
	c.add(2 * time.Hour)
	call(r, c, "kept", time.Millisecond, false)
	c.add(30 * time.Minute)
	call(r, c, "fresh", time.Millisecond, false)
	if got := names(r.Snapshot()); got != "fresh, kept" {
		t.Errorf("Snapshot has %q, want fresh and kept, each charted apart", got)
	}
	for i := range maxRateTools - 3 {
		call(r, c, fmt.Sprintf("new-%03d", i), time.Millisecond, false)
	}
	call(r, c, "past", time.Millisecond, false)
	got := r.Snapshot()
	if len(got) != maxRateTools || got[0].Tool != otherTools || got[0].Calls != 1 || !strings.Contains(names(got), "kept") {
		t.Errorf("Snapshot has %d tools (%s), want %d: kept still apart and past's call under %s", len(got), names(got), maxRateTools, otherTools)
	}
}
