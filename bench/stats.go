package main

import (
	"fmt"
	"slices"
	"strconv"
	"time"
)

// percentile returns the nearest-rank p-th percentile (0 < p <= 100) of d,
// which it sorts in place; 0 for no samples.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	rank := int(float64(len(d))*p/100+0.999999) - 1 // ceil, then 0-based
	return d[min(max(rank, 0), len(d)-1)]
}

// median returns the median of xs (the mean of the middle two for an even
// count), without modifying xs; 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// medianDur is median for durations.
func medianDur(ds []time.Duration) time.Duration {
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = float64(d)
	}
	return time.Duration(median(xs))
}

// quartiles returns the first and third quartiles of xs (nearest rank).
func quartiles(xs []float64) (q1, q3 float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	at := func(p float64) float64 {
		rank := int(float64(len(s))*p+0.999999) - 1
		return s[min(max(rank, 0), len(s)-1)]
	}
	return at(0.25), at(0.75)
}

// ratio is a/b, or 0 when b is 0 (a figure that could not be measured).
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// fmtDur renders d with three significant digits in a unit that suits it.
func fmtDur(d time.Duration) string {
	switch {
	case d <= 0:
		return "–"
	case d < time.Millisecond:
		return sig3(float64(d)/1e3) + " µs"
	case d < time.Second:
		return sig3(float64(d)/1e6) + " ms"
	default:
		return sig3(float64(d)/1e9) + " s"
	}
}

// sig3 formats x with three significant digits (no exponent).
func sig3(x float64) string {
	switch {
	case x >= 100:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case x >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	default:
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
}

// fmtRatio renders a ratio as "1.03×"; "–" when it could not be measured.
func fmtRatio(r float64) string {
	if r == 0 {
		return "–"
	}
	return strconv.FormatFloat(r, 'f', 2, 64) + "×"
}

// fmtRatioAgainst is fmtRatio for a ratio judged against target: one
// more digit when two would show the target itself for a ratio over it,
// so that no "1.00× missed" reads as a contradiction.
func fmtRatioAgainst(r, target float64) string {
	if r > target && fmtRatio(r) == fmtRatio(target) {
		return strconv.FormatFloat(r, 'f', 3, 64) + "×"
	}
	return fmtRatio(r)
}

// fmtRange renders the per-round spread of a ratio as "[0.98–1.07]".
func fmtRange(lo, hi float64) string {
	if lo == 0 && hi == 0 {
		return ""
	}
	return fmt.Sprintf("[%.2f–%.2f]", lo, hi)
}

// fmtRate renders calls per second.
func fmtRate(r float64) string {
	if r <= 0 {
		return "–"
	}
	return strconv.FormatFloat(r, 'f', 0, 64) + "/s"
}

// fmtBytes renders a byte count in KiB or MiB.
func fmtBytes(b float64) string {
	switch {
	case b >= 1<<20:
		return strconv.FormatFloat(b/(1<<20), 'f', 2, 64) + " MiB"
	default:
		return strconv.FormatFloat(b/(1<<10), 'f', 1, 64) + " KiB"
	}
}
