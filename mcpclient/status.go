package mcpclient

import "time"

// State is where a Server stands. Its values are those of host.State, so
// a host shows them as they are (internal/kinds/client converts).
type State string

// The states of a Server.
const (
	// StateStarting: the first attempt has not settled yet and its startup
	// timeout has not passed.
	StateStarting State = "starting"
	// StateReady: connected, tools registered.
	StateReady State = "ready"
	// StateReconnecting: lost or failed, retrying in the background; the
	// last good tools stay registered.
	StateReconnecting State = "reconnecting"
	// StateTimedOut: the first attempt did not settle within the startup
	// timeout.
	StateTimedOut State = "timed-out"
	// StateFailed: not running and not retrying; Status.Err says why.
	StateFailed State = "failed"
	// StateNeedsLogin: the server wants OAuth authorization that needs a
	// person (mcpbridge login); its tools are absent.
	StateNeedsLogin State = "needs-login"
	// StateClosed: Close was called.
	StateClosed State = "closed"
)

// Status is a snapshot of a Server for display and health checks.
type Status struct {
	// State is where the server stands; Err says why when it is not ready.
	State State
	Err   string
	// Name is the serverName; Transport how the server is reached.
	Name, Transport string
	// PeerName and PeerVersion are what the server reported about itself;
	// ProtocolVersion is the negotiated protocol version.
	PeerName, PeerVersion, ProtocolVersion string
	// PID is the stdio child's process (and process group) ID, 0 when
	// there is none or it is down.
	PID int
	// Tools is the number of tools registered.
	Tools int
	// Attempt is the current reconnect attempt of MaxAttempts (0 when
	// connected).
	Attempt, MaxAttempts int
	// Reconnects counts the reconnect attempts begun since Start (it only
	// grows).
	Reconnects int
	// Connect is how long spawning or connecting, including the protocol
	// handshake, took; Discover how long listing and registering the tools
	// took (both of the current connection).
	Connect, Discover time.Duration
	StatusDetails
}

// StatusDetails are the parts of a Status that say what the trust
// features found and did: pins, the definition scan, the sandbox. A host
// shows them as host.Status does (internal/kinds/client converts).
type StatusDetails struct {
	// PinNotes are the definitions that differ from their pins (or have
	// none while a lock exists), one line each: "withheld tool NAME: why",
	// or "published tool NAME (pin: warn): why".
	PinNotes []string
	// Scan is what the definition scan found at the last sync; nil when
	// it found nothing or is off.
	Scan *ScanReport
	// Sandbox says how the server's child is (or, while it is not
	// running, would be) confined; nil when the entry has no sandbox.
	Sandbox *SandboxStatus
	// Stderr is what the server's stdio children wrote on stderr lately,
	// oldest first: at most RecentStderrLines lines, escaped and
	// redacted as an error quotes them; nil when none (or not stdio).
	Stderr []string
}

// ScanReport is what the definition scan (docs/scan.md) found in a
// server's tools and prompts.
type ScanReport struct {
	// Findings, each definition's strongest first.
	Findings []ScanFinding
	// Held names the tools and prompts withheld for their findings
	// (scan: hold), as the server lists them.
	Held []string
}

// ScanFinding is one finding of the definition scan: in Tool (a prompt
// when Kind is "prompt") of Server, at Field (a JSON pointer into the
// definition), Rule matched Excerpt (escaped) with Severity low, medium
// or high.
type ScanFinding struct {
	Tool, Kind, Server, Severity, Rule, Field, Excerpt string
}

// SandboxStatus describes a sandboxed child (docs/sandbox.md).
type SandboxStatus struct {
	// LandlockABI is the kernel's Landlock ABI version the child is
	// confined at; 0 when the kernel has none and the entry allowed a
	// best effort.
	LandlockABI int
	// Network reports whether the child may use the network.
	Network bool
	// Denied says, one line each, what the sandbox has denied the running
	// child (as its stderr or a tool's error named it) and what to add to
	// the sandbox block to allow it; at most eight.
	Denied []string `json:",omitempty"`
}
