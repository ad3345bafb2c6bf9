package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/gatewayrun"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
)

// statusJSON is the stable shape of `status --json` (documented in the
// README): fields are only ever added.
type statusJSON struct {
	// Source is the config file, "--url" or "embedded default".
	Source string `json:"source"`
	// ElapsedMs is how long startup took until readiness: every first
	// attempt settled or timed out. Servers start in parallel, so it is
	// close to the slowest server, not the sum.
	ElapsedMs int64              `json:"elapsedMs"`
	Servers   []serverStatusJSON `json:"servers"`
	// Shadowed lists the resources and templates of a server that
	// aggregators (read, a gateway) take from another server, first in the
	// config, offering the same URI.
	Shadowed []shadowedJSON `json:"shadowed"`
}

// shadowedJSON is one tool.Shadowed.
type shadowedJSON struct {
	Kind       string `json:"kind"`
	Key        string `json:"key"`
	Server     string `json:"server"`
	ServedFrom string `json:"servedFrom"`
}

// serverStatusJSON is one entry of the config. Every field is always
// present except error (only when the server is not ready) and server
// (null until the server has introduced itself).
type serverStatusJSON struct {
	ID     string `json:"id"`
	Plugin string `json:"plugin"`
	// ServerName is the namespace of the entry's public tool names; "" for
	// a disabled entry (its config is not read).
	ServerName string `json:"serverName"`
	// State is one of ready, failed, timed-out, needs-login, disabled
	// (and, for a long-running host, starting, reconnecting, closed).
	State           string    `json:"state"`
	Error           string    `json:"error,omitempty"`
	Transport       string    `json:"transport"`
	Server          *peerJSON `json:"server"`
	ProtocolVersion string    `json:"protocolVersion"`
	Tools           int       `json:"tools"`
	// Resources counts the listed resources and templates; Prompts the
	// prompts.
	Resources int         `json:"resources"`
	Prompts   int         `json:"prompts"`
	Timings   timingsJSON `json:"timings"`
	// Tokens sums the tokens (o200k_base) of the definitions of the
	// server's tools as the model sees them (see tools --tokens).
	Tokens int `json:"tokens"`
	// PinNotes are the definitions that differ from their pins, and
	// whether they were withheld (see pin).
	PinNotes []string `json:"pinNotes,omitempty"`
	// Scan is what the definition scan found (docs/scan.md); absent when
	// nothing.
	Scan *host.ScanReport `json:"scan,omitempty"`
	// Origin is where the entry is written, file:line ("" for --url).
	Origin string `json:"origin"`
	// Sandbox is present only for an entry with a sandbox block.
	Sandbox *sandboxJSON `json:"sandbox,omitempty"`
}

// sandboxJSON is how a sandboxed server is confined (docs/sandbox.md):
// landlockABI 0 means the kernel has no Landlock and the entry allowed a
// best effort.
type sandboxJSON struct {
	LandlockABI int  `json:"landlockABI"`
	Network     bool `json:"network"`
	// Denied is what the sandbox denied the running server and what to
	// add to allow it, one line each; absent when nothing.
	Denied []string `json:"denied,omitempty"`
}

// peerJSON is what the server reported about itself in the handshake.
type peerJSON struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// timingsJSON are the phases of the current connection, in whole
// milliseconds (0 when it never got there).
type timingsJSON struct {
	// ConnectMs covers spawning the process or opening the HTTP session,
	// and the MCP handshake (initialize).
	ConnectMs int64 `json:"connectMs"`
	// DiscoverMs covers listing the tools (every page) and registering them.
	DiscoverMs int64 `json:"discoverMs"`
}

// offerCounts returns, by server name, how many resources (with
// templates) and prompts it offers.
func offerCounts(b *bridge) map[string][2]int {
	out := map[string][2]int{}
	add := func(server string, i int) {
		c := out[server]
		c[i]++
		out[server] = c
	}
	for _, r := range b.reg.Resources() {
		add(r.Server, 0)
	}
	for _, t := range b.reg.ResourceTemplates() {
		add(t.Server, 0)
	}
	for _, p := range b.reg.Prompts() {
		add(p.Origin.Server, 1)
	}
	return out
}

func toStatusJSON(st host.Status) serverStatusJSON {
	out := serverStatusJSON{
		ID:              st.ID,
		Plugin:          st.Plugin,
		ServerName:      st.Name,
		State:           string(st.State),
		Error:           st.Err,
		Transport:       st.Transport,
		ProtocolVersion: st.ProtocolVersion,
		Tools:           st.Tools,
		Timings:         timingsJSON{ConnectMs: st.Connect.Milliseconds(), DiscoverMs: st.Discover.Milliseconds()},
		PinNotes:        st.PinNotes,
		Scan:            st.Scan,
	}
	if st.PeerName != "" || st.PeerVersion != "" {
		out.Server = &peerJSON{Name: st.PeerName, Version: st.PeerVersion}
	}
	if sb := st.Sandbox; sb != nil {
		out.Sandbox = &sandboxJSON{LandlockABI: sb.LandlockABI, Network: sb.Network, Denied: sb.Denied}
	}
	return out
}

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
	tok, err := serverTokens(b.reg.List())
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	if f.json {
		out := statusJSON{Source: src.name, ElapsedMs: b.elapsed.Milliseconds(), Servers: []serverStatusJSON{}, Shadowed: []shadowedJSON{}}
		counts := offerCounts(b)
		for _, st := range b.statuses {
			sj := toStatusJSON(st)
			sj.Resources, sj.Prompts = counts[st.Name][0], counts[st.Name][1]
			sj.Tokens = tok[st.Name]
			sj.Origin = origins(src.plan)[st.ID]
			out.Servers = append(out.Servers, sj)
		}
		for _, s := range b.reg.ShadowedResources(gatewayrun.ServerOrder(b.statuses)) {
			out.Shadowed = append(out.Shadowed, shadowedJSON{Kind: s.Kind, Key: s.Key, Server: s.Server, ServedFrom: s.KeptBy})
		}
		enc := json.NewEncoder(e.Stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			return fmt.Errorf("status: writing JSON: %w", err)
		}
	} else {
		writeStatusTable(e.Stdout, b.statuses, tok, origins(src.plan))
		e.reportShadowed(b.reg.ShadowedResources(gatewayrun.ServerOrder(b.statuses)))
		e.reportScan(b.statuses)
		ready, servers := b.serverCount(src.plan)
		enabled := len(src.plan.Enabled())
		fmt.Fprintf(e.Stderr, "%d of %d servers ready", ready, servers)
		if off := len(src.plan.Entries) - enabled; off > 0 {
			fmt.Fprintf(e.Stderr, " (%d disabled)", off)
		}
		fmt.Fprintf(e.Stderr, " in %s\n", ms(b.elapsed))
	}
	if f.timings {
		e.printTimingSummary(b)
	}
	if len(b.failed) > 0 || held > 0 {
		return &exitError{ExitFailed}
	}
	return nil
}

// origins maps each entry of plan to where it is written, file:line; a
// plan not read from a file has none.
func origins(plan *host.Plan) map[string]string {
	out := map[string]string{}
	for _, pe := range plan.Entries {
		if pe.Entry.File != "" {
			out[pe.Entry.ID] = fmt.Sprintf("%s:%d", pe.Entry.File, pe.Entry.Line)
		}
	}
	return out
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
			tools, ntok = strconv.Itoa(st.Tools), strconv.Itoa(tok[st.Name])
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
		fmt.Fprintf(w, "%s: %s: %s\n", id, what, termsafe.Line(text))
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
