package console

import (
	"fmt"
	"strings"
	"time"
)

// Chart sizes, in SVG user units: a bar per minute.
const (
	chartBar    = 3
	chartWidth  = rateMinutes * chartBar
	chartHeight = 40
)

// bar is one minute's bar of a chart.
type bar struct{ X, Y, H int }

// toolChart is a tool's last hour as the traffic page draws it: calls
// and error rate as bars, latency percentiles as lines.
type toolChart struct {
	ToolRates
	ErrorPct          string
	CallBars, ErrBars []bar
	P50Line, P95Line  string // polyline points
	PeakCalls         int
	PeakLatency       time.Duration
}

// chartOf draws t: bars scaled to the hour's busiest minute (error rate
// to 100 %), lines to its slowest p95.
func chartOf(t ToolRates) toolChart {
	c := toolChart{ToolRates: t, ErrorPct: pct(t.Errors, t.Calls)}
	for _, m := range t.Minutes {
		c.PeakCalls = max(c.PeakCalls, m.Calls)
		c.PeakLatency = max(c.PeakLatency, m.P95)
	}
	var p50, p95 []string
	for i, m := range t.Minutes {
		if m.Calls == 0 {
			continue
		}
		x := i * chartBar
		c.CallBars = append(c.CallBars, barOf(x, m.Calls, c.PeakCalls))
		if m.Errors > 0 {
			c.ErrBars = append(c.ErrBars, barOf(x, m.Errors, m.Calls))
		}
		p50 = append(p50, point(x, m.P50, c.PeakLatency))
		p95 = append(p95, point(x, m.P95, c.PeakLatency))
	}
	c.P50Line, c.P95Line = strings.Join(p50, " "), strings.Join(p95, " ")
	return c
}

// barOf is a bar of n out of peak, at least a pixel high.
func barOf(x, n, peak int) bar {
	h := max(1, n*chartHeight/max(peak, 1))
	return bar{X: x, Y: chartHeight - h, H: h}
}

func point(x int, d, peak time.Duration) string {
	y := chartHeight - int(int64(d)*int64(chartHeight-2)/int64(max(peak, 1))) - 1
	return fmt.Sprintf("%d,%d", x+1, y)
}

func pct(n, of int) string {
	if of == 0 {
		return "0 %"
	}
	return fmt.Sprintf("%.0f %%", 100*float64(n)/float64(of))
}
