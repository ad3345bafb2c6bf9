package mcpclient

import "time"

// State is where a Server stands. Its values are those of host.State, so
// a host shows them as they are (package clientkind converts).
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
}
