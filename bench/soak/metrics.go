package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// gauges are the figures of serve's /metrics the soak follows.
type gauges struct {
	heap       float64 // go_memstats_heap_alloc_bytes
	goroutines float64 // go_goroutines
	rss        float64 // process_resident_memory_bytes
	sessions   float64 // mcpbridge_gateway_sessions
}

// scrape reads the gauges from a /metrics URL.
func scrape(ctx context.Context, url string) (gauges, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return gauges{}, err
	}
	// Uncompressed: a gzip writer kept for the next scrape would be a
	// megabyte or two of serve's heap that only the soak's reading put
	// there.
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return gauges{}, fmt.Errorf("scraping %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return gauges{}, fmt.Errorf("scraping %s: %s", url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return gauges{}, fmt.Errorf("scraping %s: %w", url, err)
	}
	value := func(name string) float64 {
		f := families[name]
		if f == nil || len(f.GetMetric()) == 0 {
			return -1
		}
		m := f.GetMetric()[0]
		if m.GetGauge() != nil {
			return m.GetGauge().GetValue()
		}
		return m.GetUntyped().GetValue()
	}
	g := gauges{heap: value("go_memstats_heap_alloc_bytes"), goroutines: value("go_goroutines"),
		rss: value("process_resident_memory_bytes"), sessions: value("mcpbridge_gateway_sessions")}
	if g.heap < 0 {
		return g, fmt.Errorf("scraping %s: no go_memstats_heap_alloc_bytes", url)
	}
	return g, nil
}

// lowest scrapes url every interval for d and returns the lowest heap seen
// with the gauges read with it: between two collections the heap holds
// garbage too, and its low points are what stays.
func lowest(ctx context.Context, url string, d, interval time.Duration) (gauges, error) {
	var low gauges
	deadline := time.Now().Add(d)
	for first := true; ; first = false {
		g, err := scrape(ctx, url)
		if err != nil {
			return low, err
		}
		if first || g.heap < low.heap {
			low = g
		}
		if time.Now().After(deadline) {
			return low, nil
		}
		select {
		case <-ctx.Done():
			return low, ctx.Err()
		case <-time.After(interval): // a sampling interval, not a wait for an event
		}
	}
}
