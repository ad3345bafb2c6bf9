package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// table is one section of the output: printed aligned on the terminal and
// as Markdown in BENCHMARKS.md.
type table struct {
	title   string
	command string // reproduces every figure of the table
	header  []string
	rows    [][]string
	notes   []string
}

// print writes t aligned for a terminal.
func (t table) print(w io.Writer) {
	fmt.Fprintf(w, "\n== %s\n   (%s)\n", t.title, t.command)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.header, "\t"))
	for _, r := range t.rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
	for _, n := range t.notes {
		fmt.Fprintln(w, "   "+n)
	}
}

// markdown writes t as a Markdown section.
func (t table) markdown(w io.Writer) {
	fmt.Fprintf(w, "## %s\n\nReproduce: `%s`\n\n", t.title, t.command)
	fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(t.header, " | "), strings.Repeat("---|", len(t.header)))
	for _, r := range t.rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
	}
	if len(t.notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range t.notes {
			fmt.Fprintf(w, "- %s\n", n)
		}
	}
	fmt.Fprintln(w)
}

// verdict renders whether value meets a ceiling.
func verdict(value, ceiling float64) string {
	switch {
	case value == 0:
		return "not measured"
	case value <= ceiling:
		return "met"
	default:
		return "missed"
	}
}

// command returns the driver command for the given row group, with the
// mode's own flags.
func (o options) command(only string) string {
	parts := []string{"go run ./bench"}
	if o.smoke {
		parts = append(parts, "-smoke")
	}
	parts = append(parts, o.extraArgs...)
	if only != "" {
		parts = append(parts, "-only "+only)
	}
	return strings.Join(parts, " ")
}

// callTables renders rows 1–3.
func callTables(o options, r *callResults) []table {
	per := table{
		title:   "Rows 1–3: echo call latency and throughput, per client and server",
		command: o.command("calls"),
		header: []string{"server", "client", "protocol", "seq p50", "seq p99", "client CPU/call", "allocs/call", "B/call",
			fmt.Sprintf("%d callers", r.workers), "[IQR]"},
		notes: []string{
			fmt.Sprintf("%d sequential calls per variant in %d interleaved rounds (after %d warm-up calls), pooled p50/p99; %d concurrent callers make %d calls per round, %d rounds, median calls/s with the interquartile range over rounds.",
				r.seqCalls, r.rounds, o.warmup, r.workers, r.concCalls, r.concRounds),
			"Every call is checked: text \"Echo: hi\". Client CPU/call, allocs/call and B/call are this process's (user+system CPU, heap allocations) during the sequential rounds; the Node client and the servers run in their own processes.",
			"The raw go-sdk client uses the bridge's client options (no capabilities, multi-round trip off, a list_changed handler) through the SDK's CommandTransport, so the two differ by what the bridge adds.",
		},
	}
	for _, v := range r.variants {
		allocs, bytes := "–", "–"
		if v.inProc && v.calls > 0 {
			allocs = strconv.FormatFloat(float64(v.mallocs)/float64(v.calls), 'f', 0, 64)
			bytes = strconv.FormatFloat(float64(v.bytes)/float64(v.calls), 'f', 0, 64)
		}
		lo, hi := quartiles(v.rates)
		per.rows = append(per.rows, []string{v.server, v.client, v.c.protocol(), fmtDur(v.p50), fmtDur(v.p99), fmtDur(v.cpuPerCall()),
			allocs, bytes, fmtRate(median(v.rates)), "[" + strconv.FormatFloat(lo, 'f', 0, 64) + "–" + strconv.FormatFloat(hi, 'f', 0, 64) + "]"})
	}
	per.notes = append(per.notes, r.skipped...)

	cmp := table{
		title:   "Rows 1–3: ratios (time over time: below 1 means the first is faster)",
		command: o.command("calls"),
		header: []string{"comparison", "p50 ratio", "[per-round IQR]", "p99 ratio", "client CPU ratio",
			fmt.Sprintf("cost ratio, %d callers", r.workers), "[per-round IQR]", "target (p50)"},
		notes: []string{
			"p50/p99 ratio: pooled percentile of the first over the second; [per-round IQR]: interquartile range of the same ratio taken round by round (each round runs the two back to back).",
			"Client CPU ratio: this process's CPU per call, first over second (– when one side runs in another process). Cost ratio: the second's calls/s over the first's, so it reads like a time ratio.",
		},
	}
	for _, c := range r.comparisons {
		a, b := r.variant(c.a), r.variant(c.b)
		if a == nil || b == nil {
			continue
		}
		p50, p99, lo, hi := seqRatio(a, b)
		cost, clo, chi := rateRatio(a, b)
		target := ""
		if c.target > 0 {
			target = fmt.Sprintf("≤ %.2f× %s", c.target, verdict(p50, c.target))
			if c.stretch {
				target = "stretch " + target
			}
		}
		cpu := ratio(float64(a.cpuPerCall()), float64(b.cpuPerCall())) // 0 ("–") when either is unmeasured
		cmp.rows = append(cmp.rows, []string{c.what, fmtRatio(p50), fmtRange(lo, hi), fmtRatio(p99), fmtRatio(cpu), fmtRatio(cost), fmtRange(clo, chi), target})
	}
	return []table{per, cmp}
}

// startupTable renders row 4.
func startupTable(o options, r *startupResults) table {
	t := table{
		title:   fmt.Sprintf("Row 4: startup of stdio servers whose initialize takes %s", r.delay),
		command: o.command("startup"),
		header: []string{"servers", "host", "ratio to 1 server", "bridge", "ratio to 1 server", "raw go-sdk", "ratio to 1 server",
			"process floor", "ratio to 1 server", "host / raw", "host / floor"},
		notes: []string{
			fmt.Sprintf("Time from the first spawn until every server's %d tools are registered, median of %d interleaved rounds. Host: a composition file of n mcp-client entries parsed and applied (host.Apply returns when every first attempt settled). Bridge: one mcpclient.Start per server, all at once, then WaitReady on each. Raw go-sdk: parallel Connect + ListTools. Process floor: the same processes spawned at once and sent initialize and tools/list as bare JSON-RPC lines (no SDK, no discover probe).", r.tools, r.rounds),
			"Each server is bench/responder, the minimal responder, holding initialize back; both go-sdk clients first send the server/discover probe, which it refuses.",
		},
	}
	base := r.counts[0]
	h1, b1, r1, f1 := medianDur(r.host[base]), medianDur(r.bridge[base]), medianDur(r.raw[base]), medianDur(r.floor[base])
	for _, n := range r.counts {
		hn, bn, rn, fn := medianDur(r.host[n]), medianDur(r.bridge[n]), medianDur(r.raw[n]), medianDur(r.floor[n])
		t.rows = append(t.rows, []string{strconv.Itoa(n),
			fmtDur(hn), fmtRatio(ratio(float64(hn), float64(h1))),
			fmtDur(bn), fmtRatio(ratio(float64(bn), float64(b1))),
			fmtDur(rn), fmtRatio(ratio(float64(rn), float64(r1))),
			fmtDur(fn), fmtRatio(ratio(float64(fn), float64(f1))),
			fmtRatio(ratio(float64(hn), float64(rn))), fmtRatio(ratio(float64(hn), float64(fn)))})
	}
	return t
}

// catalogTable renders row 5.
func catalogTable(o options, r *catalogResults) table {
	t := table{
		title:   fmt.Sprintf("Row 5: catalog of %d tools, %d per page", r.tools, r.pageSize),
		command: o.command("catalog"),
		header:  []string{"phase", "bridge (median)", "[range]", "raw go-sdk (median)", "bridge / raw"},
		notes: []string{
			fmt.Sprintf("Median of %d interleaved rounds against a raw responder. Raw go-sdk lists every page (typed decoding, nothing registered); the bridge also names, checks and registers every tool.", r.rounds),
			"Discovery + registration is the bridge's own Status().Discover: every tools/list page, public names, and the atomic registry swap.",
			fmt.Sprintf("Byte-identical: every round, all %d registered definitions (name, description, inputSchema, outputSchema) equal the bytes the server sent, after discovery and again after the re-sync, and the two List snapshots are equal.", r.compared),
		},
	}
	row := func(phase string, b, raw []time.Duration) {
		lo, hi := minMaxDur(b)
		rawCell, ratioCell := "–", "–"
		if raw != nil {
			rawCell = fmtDur(medianDur(raw))
			ratioCell = fmtRatio(ratio(float64(medianDur(b)), float64(medianDur(raw))))
		}
		t.rows = append(t.rows, []string{phase, fmtDur(medianDur(b)), "[" + fmtDur(lo) + "–" + fmtDur(hi) + "]", rawCell, ratioCell})
	}
	row("spawn + connect + discovery + registration", r.bridgeTotal, r.rawTotal)
	row("discovery + registration (target < 1 s)", r.bridgeDiscover, r.rawList)
	row("re-sync after list_changed, unchanged list", r.resync, nil)
	return t
}

// memoryTable renders row 7.
func memoryTable(o options, r *memoryResults) table {
	t := table{
		title:   fmt.Sprintf("Row 7: memory with %d idle connected servers, per server", r.servers),
		command: o.command("memory"),
		header:  []string{"per server", "bridge (median)", "raw go-sdk (median)", "bridge / raw"},
		notes: []string{
			fmt.Sprintf("Each figure: (after − before) / %d in a fresh process that connects go-sdk fixture servers (12 tools each) and stays idle; heap after two GCs; median of %d rounds.", r.servers, r.rounds),
			"The servers' own processes are not counted.",
		},
	}
	add := func(what string, m map[string][]float64, f func(float64) string) {
		b, raw := median(m["bridge"]), median(m["raw"])
		t.rows = append(t.rows, []string{what, f(b), f(raw), fmtRatio(ratio(b, raw))})
	}
	add("Go heap (live)", r.heap, fmtBytes)
	add("RSS", r.rss, fmtBytes)
	add("goroutines", r.goroutines, func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) })
	return t
}

// gatewayTable renders row 6 from the call rows' gateway variants.
func gatewayTable(o options, r *callResults) table {
	t := table{
		title:   "Row 6: gateway calls vs direct (raw responder)",
		command: o.command("calls"),
		header:  []string{"path", "seq p50", "p50 ratio to direct", fmt.Sprintf("%d callers", r.workers), "cost ratio to direct"},
		notes: []string{
			"Direct: the raw go-sdk client on the responder. mcpbridge serve: the same client calling mcp__bench__echo through a separate `mcpbridge serve --config F --stdio` process (spawned by the client) or `--http ADDR` process (loopback), whose one mcp-client entry is the responder. Gateway: the same path in this process (gateway.ServeStdio on an OS pipe pair, gateway.Handler on a loopback listener) in front of a bridge server, without the serve process and its host.",
			"Peers: the same client through supergateway and punkpeye's mcp-proxy (npm, pinned in testdata/thirdparty, run with its Node 22) serving Streamable HTTP at /mcp with the responder behind them on stdio. TBXark/mcp-proxy (Go; the module proxy here refuses it) is built from its source archive in the -peers folder, outside the repository, and serves Streamable HTTP at /resp/mcp; without the folder its row is skipped with a note.",
			"Measured with the call rows, interleaved with them; protocol pinned to 2025-11-25 between client and gateway, but in the negotiated rows: 2026-07-28, which serve answers per request, from a client offering roots as the go-sdk's does by default; cmd/mcpbridge is built at start.",
		},
	}
	direct := r.variant("raw-sdk")
	for _, key := range []string{"serve-stdio", "serve-http", "gw-stdio", "gw-http", "peer-1", "peer-2"} {
		v := r.variant(key)
		if v == nil || direct == nil {
			continue
		}
		p50, _, _, _ := seqRatio(v, direct)
		cost, _, _ := rateRatio(v, direct)
		t.rows = append(t.rows, []string{v.client, fmtDur(v.p50), fmtRatio(p50), fmtRate(median(v.rates)), fmtRatio(cost)})
	}
	return t
}

func minMaxDur(ds []time.Duration) (lo, hi time.Duration) {
	for i, d := range ds {
		if i == 0 || d < lo {
			lo = d
		}
		if d > hi {
			hi = d
		}
	}
	return lo, hi
}

// targetsTable summarizes the targets.
func targetsTable(o options, calls *callResults, st *startupResults, cat *catalogResults, search *searchResults) table {
	t := table{
		title:   "Targets",
		command: o.command(""),
		header:  []string{"target", "measured", "verdict"},
	}
	if calls != nil {
		for _, c := range calls.comparisons {
			a, b := calls.variant(c.a), calls.variant(c.b)
			if c.target == 0 || a == nil || b == nil {
				continue
			}
			p50, _, _, _ := seqRatio(a, b)
			name := fmt.Sprintf("%s: p50 ≤ %.2f×", c.what, c.target)
			if c.stretch {
				name = "stretch: " + name
			}
			t.rows = append(t.rows, []string{name, fmtRatioAgainst(p50, c.target), verdict(p50, c.target)})
			if c.costTarget > 0 {
				cost, _, _ := rateRatio(a, b)
				t.rows = append(t.rows, []string{fmt.Sprintf("%s: cost at %d callers ≤ %.2f×", c.what, calls.workers, c.costTarget), fmtRatioAgainst(cost, c.costTarget), verdict(cost, c.costTarget)})
			}
		}
	}
	if st != nil {
		last := st.counts[len(st.counts)-1]
		r := ratio(float64(medianDur(st.host[last])), float64(medianDur(st.host[st.counts[0]])))
		t.rows = append(t.rows, []string{fmt.Sprintf("startup (host) of %d servers / 1 server ≤ 1.30×", last), fmtRatio(r), verdict(r, 1.3)})
	}
	if cat != nil {
		d := medianDur(cat.bridgeDiscover)
		t.rows = append(t.rows, []string{fmt.Sprintf("%d-tool discovery + registration well under 1 s", cat.tools), fmtDur(d), verdict(d.Seconds(), 1)})
	}
	if search != nil {
		t.rows = append(t.rows, searchTargets(search)...)
	}
	return t
}

// machine describes where the run happened, for the report header.
type machine struct {
	date, commit, cpu, kernel, goVersion, nodeVersion, sdkVersions string
	cpus, maxprocs                                                 int
	memTotal                                                       string
	loadBefore, loadAfter                                          string
	duration                                                       time.Duration
}

// readFirstLine returns the first line of path with prefix, after the
// prefix; "" when absent.
func readFirstLine(path, prefix string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			return strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(rest), ":"))
		}
	}
	return ""
}

// handMarker separates the generated part of BENCHMARKS.md from the
// hand-written analysis below it, which a run keeps.
const handMarker = "<!-- Everything below this line is written by hand; `go run ./bench` keeps it. -->"

// writeMarkdown writes BENCHMARKS.md to path, keeping the hand-written part
// of the file already there.
func writeMarkdown(path string, o options, m machine, tables []table) error {
	if o.partial() {
		if merged, err := mergeMarkdown(path, m, tables); merged {
			return err
		}
	}
	var kept string
	if old, err := os.ReadFile(path); err == nil {
		if _, after, ok := strings.Cut(string(old), handMarker); ok {
			kept = after
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Benchmarks\n\n")
	fmt.Fprintf(&b, "Generated by `%s` — every figure below is reproduced by the command named in its section (or this one for all of them). ", o.command(""))
	fmt.Fprintf(&b, "Absolute times on this shared machine are noise; the ratios, measured side by side in one run with interleaved rounds, are the result.\n\n")
	fmt.Fprintf(&b, "| | |\n|---|---|\n")
	for _, kv := range [][2]string{
		{"date", m.date},
		{"commit", m.commit},
		{"machine", fmt.Sprintf("%s, %d CPUs (GOMAXPROCS %d), %s RAM, Linux %s", m.cpu, m.cpus, m.maxprocs, m.memTotal, m.kernel)},
		{"toolchain", m.goVersion + "; Node " + m.nodeVersion},
		{"SDKs", m.sdkVersions},
		{"load average (1/5/15 min) before → after", m.loadBefore + " → " + m.loadAfter},
		{"run time", m.duration.Round(time.Second).String()},
	} {
		fmt.Fprintf(&b, "| %s | %s |\n", kv[0], kv[1])
	}
	fmt.Fprintln(&b)
	for _, t := range tables {
		t.markdown(&b)
	}
	b.WriteString(handMarker)
	if kept == "" {
		kept = "\n"
	}
	b.WriteString(kept)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
