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

// dot is one minute's point of a line: a minute alone draws no line.
type dot struct{ X, Y int }

// toolChart is a tool's last hour as the traffic page draws it: calls
// and error rate as bars, latency percentiles as lines.
type toolChart struct {
	ToolRates
	ErrorPct          string
	CallBars, ErrBars []bar
	P50Line, P95Line  string // polyline points
	P50Dots, P95Dots  []dot
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
		d50, d95 := point(x, m.P50, c.PeakLatency), point(x, m.P95, c.PeakLatency)
		c.P50Dots, c.P95Dots = append(c.P50Dots, d50), append(c.P95Dots, d95)
		p50, p95 = append(p50, fmt.Sprintf("%d,%d", d50.X, d50.Y)), append(p95, fmt.Sprintf("%d,%d", d95.X, d95.Y))
	}
	c.P50Line, c.P95Line = strings.Join(p50, " "), strings.Join(p95, " ")
	return c
}

// barOf is a bar of n out of peak, at least a pixel high.
func barOf(x, n, peak int) bar {
	h := max(1, n*chartHeight/max(peak, 1))
	return bar{X: x, Y: chartHeight - h, H: h}
}

// point is a latency's place on a line scaled to peak.
func point(x int, d, peak time.Duration) dot {
	return dot{X: x + 1, Y: chartHeight - int(int64(d)*int64(chartHeight-4)/int64(max(peak, 1))) - 2}
}

func pct(n, of int) string {
	if of == 0 {
		return "0 %"
	}
	return fmt.Sprintf("%.0f %%", 100*float64(n)/float64(of))
}
