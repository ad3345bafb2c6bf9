package report

import (
	"fmt"
	"time"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/tool"
)

// Status is the stable shape of `status --json` (documented in the
// README): fields are only ever added.
type Status struct {
	// Source is the config file, "--url" or "embedded default".
	Source string `json:"source"`
	// ElapsedMs is how long startup took until readiness: every first
	// attempt settled or timed out. Servers start in parallel, so it is
	// close to the slowest server, not the sum.
	ElapsedMs int64    `json:"elapsedMs"`
	Servers   []Server `json:"servers"`
	// Shadowed lists the resources and templates of a server that
	// aggregators (read, a gateway) take from another server, first in the
	// config, offering the same URI.
	Shadowed []Shadowed `json:"shadowed"`
}

// Shadowed is one tool.Shadowed.
type Shadowed struct {
	Kind       string `json:"kind"`
	Key        string `json:"key"`
	Server     string `json:"server"`
	ServedFrom string `json:"servedFrom"`
}

// Server is one entry of the config. Every field is always
// present except error (only when the server is not ready) and server
// (null until the server has introduced itself).
type Server struct {
	ID     string `json:"id"`
	Plugin string `json:"plugin"`
	// ServerName is the namespace of the entry's public tool names; "" for
	// a disabled entry (its config is not read).
	ServerName string `json:"serverName"`
	// State is one of ready, failed, timed-out, needs-login, disabled
	// (and, for a long-running host, starting, reconnecting, closed).
	State           string `json:"state"`
	Error           string `json:"error,omitempty"`
	Transport       string `json:"transport"`
	Server          *Peer  `json:"server"`
	ProtocolVersion string `json:"protocolVersion"`
	Tools           int    `json:"tools"`
	// Resources counts the listed resources and templates; Prompts the
	// prompts.
	Resources int     `json:"resources"`
	Prompts   int     `json:"prompts"`
	Timings   Timings `json:"timings"`
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
	Sandbox *Sandbox `json:"sandbox,omitempty"`
}

// Sandbox is how a sandboxed server is confined (docs/sandbox.md):
// landlockABI 0 means the kernel has no Landlock and the entry allowed a
// best effort.
type Sandbox struct {
	LandlockABI int  `json:"landlockABI"`
	Network     bool `json:"network"`
	// Denied is what the sandbox denied the running server and what to
	// add to allow it, one line each; absent when nothing.
	Denied []string `json:"denied,omitempty"`
}

// Peer is what the server reported about itself in the handshake.
type Peer struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Timings are the phases of the current connection, in whole
// milliseconds (0 when it never got there).
type Timings struct {
	// ConnectMs covers spawning the process or opening the HTTP session,
	// and the MCP handshake (initialize).
	ConnectMs int64 `json:"connectMs"`
	// DiscoverMs covers listing the tools (every page) and registering them.
	DiscoverMs int64 `json:"discoverMs"`
}

// offerCounts returns, by server name, how many resources (with
// templates) and prompts it offers in reg.
func offerCounts(reg *tool.Registry) map[string][2]int {
	out := map[string][2]int{}
	add := func(server string, i int) {
		c := out[server]
		c[i]++
		out[server] = c
	}
	for _, r := range reg.Resources() {
		add(r.Server, 0)
	}
	for _, t := range reg.ResourceTemplates() {
		add(t.Server, 0)
	}
	for _, p := range reg.Prompts() {
		add(p.Origin.Server, 1)
	}
	return out
}

// ServerOf is st as status --json shows it, but for what the registry
// and the plan know (NewStatus fills them in).
func ServerOf(st host.Status) Server {
	out := Server{
		ID:              st.ID,
		Plugin:          st.Plugin,
		ServerName:      st.Name,
		State:           string(st.State),
		Error:           st.Err,
		Transport:       st.Transport,
		ProtocolVersion: st.ProtocolVersion,
		Tools:           st.Tools,
		Timings:         Timings{ConnectMs: st.Connect.Milliseconds(), DiscoverMs: st.Discover.Milliseconds()},
		PinNotes:        st.PinNotes,
		Scan:            st.Scan,
	}
	if st.PeerName != "" || st.PeerVersion != "" {
		out.Server = &Peer{Name: st.PeerName, Version: st.PeerVersion}
	}
	if sb := st.Sandbox; sb != nil {
		out.Sandbox = &Sandbox{LandlockABI: sb.LandlockABI, Network: sb.Network, Denied: sb.Denied}
	}
	return out
}

// Origins maps each entry of plan to where it is written, file:line; a
// plan not read from a file has none.
func Origins(plan *host.Plan) map[string]string {
	out := map[string]string{}
	for _, pe := range plan.Entries {
		if pe.Entry.File != "" {
			out[pe.Entry.ID] = fmt.Sprintf("%s:%d", pe.Entry.File, pe.Entry.Line)
		}
	}
	return out
}

// NewStatus is status --json of statuses (in plan order), read from
// source and ready after elapsed: each server with its offers in reg, its
// tools' tokens (tok, by server) and where plan writes it, and the
// resources shadowed by another server's (order: the servers' names in
// config order).
func NewStatus(source string, elapsed time.Duration, statuses []host.Status, reg *tool.Registry, plan *host.Plan, tok map[string]int, order []string) Status {
	out := Status{Source: source, ElapsedMs: elapsed.Milliseconds(), Servers: []Server{}, Shadowed: []Shadowed{}}
	counts := offerCounts(reg)
	where := Origins(plan)
	for _, st := range statuses {
		sj := ServerOf(st)
		sj.Resources, sj.Prompts = counts[st.Name][0], counts[st.Name][1]
		sj.Tokens = tok[st.Name]
		sj.Origin = where[st.ID]
		out.Servers = append(out.Servers, sj)
	}
	for _, s := range reg.ShadowedResources(order) {
		out.Shadowed = append(out.Shadowed, Shadowed{Kind: s.Kind, Key: s.Key, Server: s.Server, ServedFrom: s.KeptBy})
	}
	return out
}
