package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/gatewayrun"
	"github.com/mcpbridge/mcpbridge/internal/report"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
)

// transportText is the TRANSPORT cell: the transport, and for a sandboxed
// server the Landlock ABI it is confined at.
func transportText(st host.Status) string {
	switch {
	case st.Sandbox == nil:
		return st.Transport
	case st.Sandbox.LandlockABI == 0:
		return st.Transport + " (sandbox, no Landlock)"
	default:
		return fmt.Sprintf("%s (sandbox, Landlock %d)", st.Transport, st.Sandbox.LandlockABI)
	}
}

// status starts the servers, waits for readiness, and shows each one's
// state, identity, protocol, tool count and timings. Exit status 1 when an
// enabled server is not ready, or a definition is withheld by its pin.
func (e *env) status(ctx context.Context, argv []string) error {
	f, src, b, err := e.openCommand(ctx, "status", argv)
	if b == nil {
		return err
	}
	defer b.close()
	held := e.reportPinNotes(b)
	tok, err := report.ServerTotals(b.reg.List())
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	if f.json {
		out := report.NewStatus(src.name, b.elapsed, b.statuses, b.reg, src.plan, tok, gatewayrun.ServerOrder(b.statuses))
		if err := writeJSON(e.Stdout, out); err != nil {
			return fmt.Errorf("status: writing JSON: %w", err)
		}
	} else {
		writeStatusTable(e.Stdout, b.statuses, tok, report.Origins(src.plan))
		e.reportShadowed(b.reg.ShadowedResources(gatewayrun.ServerOrder(b.statuses)))
		e.reportScan(b.statuses, f)
		ready, servers := b.serverCount(src.plan)
		enabled := len(src.plan.Enabled())
		fmt.Fprintf(e.Stderr, "%d of %d servers ready", ready, servers)
		if off := len(src.plan.Entries) - enabled; off > 0 {
			fmt.Fprintf(e.Stderr, " (%d disabled)", off)
		}
		fmt.Fprintf(e.Stderr, " in %s%s\n", ms(b.elapsed), b.otherFailures())
	}
	if f.timings {
		e.printTimingSummary(b)
	}
	if len(b.failed) > 0 || held > 0 {
		return &exitError{ExitFailed}
	}
	return nil
}

// writeStatusTable prints one row per entry, then each failure's reason;
// tok holds each server's tokens by name, origin each entry's file:line by
// id.
func writeStatusTable(w io.Writer, statuses []host.Status, tok map[string]int, origin map[string]string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSERVER\tSTATE\tTRANSPORT\tPEER\tPROTOCOL\tTOOLS\tTOKENS\tCONNECT\tDISCOVER\tORIGIN")
	for _, st := range statuses {
		// What the server says about itself may hold anything: a
		// newline (a broken table), escape sequences (a terminal
		// obeying them); cell shows them escaped.
		peer := dash(st.PeerName)
		if st.PeerVersion != "" {
			peer += " " + st.PeerVersion
		}
		tools, ntok, connect, discover := "-", "-", "-", "-"
		if st.State != host.StateDisabled {
			tools, ntok = strconv.Itoa(st.Tools), "0"
		}
		if st.Tools > 0 { // not those of a working entry whose serverName it shares
			ntok = strconv.Itoa(tok[st.Name])
		}
		if st.Connect > 0 || st.Discover > 0 {
			connect, discover = ms(st.Connect), ms(st.Discover)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", st.ID, dash(st.Name), stateText(st.State),
			cell(transportText(st)), cell(peer), cell(st.ProtocolVersion), tools, ntok, connect, discover, cell(origin[st.ID]))
	}
	tw.Flush()
	first := true
	note := func(id, what, text string) {
		if first {
			fmt.Fprintln(w)
			first = false
		}
		fmt.Fprintf(w, "%s: %s: %s\n", id, what, termsafe.Lines(text))
	}
	for _, st := range statuses {
		if st.Err != "" {
			note(st.ID, stateText(st.State), st.Err)
		}
		if st.Sandbox != nil {
			for _, d := range st.Sandbox.Denied {
				note(st.ID, "sandbox", d)
			}
		}
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// cell is a table cell of text from outside: dash, on one line, with
// control characters escaped.
func cell(s string) string { return termsafe.Line(dash(s)) }

// ms renders a duration in milliseconds, with one decimal under 10 ms so a
// fast in-process server does not read as 0.
func ms(d time.Duration) string {
	if d < 10*time.Millisecond {
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}

// printTimings shows, on stderr, how long each server took to start, and
// the summary: which server was slowest and what parallel startup saved.
func (e *env) printTimings(b *bridge) {
	tw := tabwriter.NewWriter(e.Stderr, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSTATE\tCONNECT\tDISCOVER")
	for _, st := range b.statuses {
		if st.State == host.StateDisabled {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", st.Name, stateText(st.State), ms(st.Connect), ms(st.Discover))
	}
	tw.Flush()
	e.printTimingSummary(b)
}

// printTimingSummary says how long startup took and, with several
// connected servers, which one was slowest and how long they would have
// taken one after another: the gain of starting them in parallel.
func (e *env) printTimingSummary(b *bridge) {
	var slowest host.Status
	var sum time.Duration
	n := 0
	for _, st := range b.statuses {
		d := st.Connect + st.Discover
		if d == 0 {
			continue // disabled, or never connected
		}
		n++
		sum += d
		if d > slowest.Connect+slowest.Discover {
			slowest = st
		}
	}
	fmt.Fprintf(e.Stderr, "ready in %s", ms(b.elapsed))
	if n > 1 && slowest.Name != "" {
		fmt.Fprintf(e.Stderr, "; slowest server %s (%s); one after another the %d servers would have taken at least %s", slowest.Name, ms(slowest.Connect+slowest.Discover), n, ms(sum))
	}
	fmt.Fprintln(e.Stderr)
}
