package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// totals are the operations made and those that succeeded, of every kind.
func (t *tally) totals() (made, ok int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.kinds {
		made += c.made
		ok += c.ok
	}
	return made, ok
}

// sum adds up a field of every kind.
func (t *tally) sum(field func(*counts) int) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, c := range t.kinds {
		n += field(c)
	}
	return n
}

// heapLimit is the heap allowed after idle.
func (r *result) heapLimit(o options) float64 {
	return r.start.heap*(1+o.heapTolerance) + float64(o.heapSlack)
}

// faults are the reasons the soak failed; none means it held.
func (r *result) faults(o options) []string {
	var out []string
	if n := r.tally.sum(func(c *counts) int { return c.hangs }); n > 0 {
		out = append(out, fmt.Sprintf("%d operation(s) took %v or more (hangs): %s", n, o.hangBound, strings.Join(r.tally.hangAt, "; ")))
	}
	if n := r.tally.sum(func(c *counts) int { return c.wrong }); n > 0 {
		out = append(out, fmt.Sprintf("%d call(s) answered something other than what they asked for", n))
	}
	if _, ok := r.tally.totals(); ok == 0 {
		out = append(out, "no operation succeeded")
	}
	if len(r.survivors) > 0 {
		out = append(out, fmt.Sprintf("%d process(es) serve started outlived it (orphans): pids %v", len(r.survivors), r.survivors))
	}
	if r.scanErr != nil {
		out = append(out, fmt.Sprintf("reading serve's processes: %v", r.scanErr))
	}
	if r.stopErr != nil {
		out = append(out, fmt.Sprintf("serve after SIGTERM: %v (after %v)", r.stopErr, r.stopTook.Round(time.Millisecond)))
	}
	if limit := r.heapLimit(o); r.end.heap > limit {
		out = append(out, fmt.Sprintf("serve's heap after idle is %s, over %s (%s at start, +%.0f%% +%s)",
			mib(r.end.heap), mib(limit), mib(r.start.heap), o.heapTolerance*100, mib(float64(o.heapSlack))))
	}
	return out
}

// print writes the summary.
func (r *result) print(w io.Writer) {
	fmt.Fprintf(w, "soak: %v of load\n\n", r.elapsed.Round(time.Second))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "operation\tmade\tok\tfailed\twrong\thangs\tslowest\t")
	r.tally.mu.Lock()
	kinds := make([]string, 0, len(r.tally.kinds))
	for k := range r.tally.kinds {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		c := r.tally.kinds[k]
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%v\t\n", k, c.made, c.ok, c.failed, c.wrong, c.hangs, c.slowest.Round(time.Millisecond))
	}
	errs := make([]string, 0, len(r.tally.errs))
	for e := range r.tally.errs {
		errs = append(errs, e)
	}
	slices.SortFunc(errs, func(a, b string) int { return cmp.Compare(r.tally.errs[b], r.tally.errs[a]) })
	counts := r.tally.errs
	r.tally.mu.Unlock()
	tw.Flush()
	fmt.Fprintf(w, "\nconfig rewrites %d (serve reloaded %d times, applied %d); backends killed %d; serve warnings %d\n",
		r.writes, r.reloads, r.applied, r.kills, r.warnings)
	fmt.Fprintf(w, "serve after the load: heap %s, %.0f goroutines, %.0f sessions, RSS %s; %d sessions left without a DELETE were then ended\n",
		mib(r.held.heap), r.held.goroutines, r.held.sessions, mib(r.held.rss), r.ended)
	if r.kept > 0 {
		fmt.Fprintf(w, "long sessions: %d held open from the load through the idle; once closed: heap %s, %.0f goroutines, %.0f sessions\n",
			r.kept, mib(r.closed.heap), r.closed.goroutines, r.closed.sessions)
	}
	fmt.Fprintf(w, "serve heap: %s at start, %s at peak, %s after idle; goroutines %.0f → %.0f; RSS %s → %s; sessions after idle %.0f\n",
		mib(r.start.heap), mib(r.peak.heap), mib(r.end.heap), r.start.goroutines, r.end.goroutines, mib(r.start.rss), mib(r.end.rss), r.end.sessions)
	fmt.Fprintf(w, "serve exit after SIGTERM: %v in %v; processes left behind: %d\n", exitText(r.stopErr), r.stopTook.Round(time.Millisecond), len(r.survivors))
	if len(errs) > 0 {
		fmt.Fprintln(w, "\nmost frequent errors:")
		for _, e := range errs[:min(len(errs), 16)] {
			fmt.Fprintf(w, "  %6d  %s\n", counts[e], e)
		}
	}
}

func exitText(err error) string {
	if err == nil {
		return "status 0"
	}
	return err.Error()
}
