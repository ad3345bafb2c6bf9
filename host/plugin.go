package host

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/tool"
)

// Kind is a plugin kind: what an entry's name selects (mcp-client is one).
// A Kind is a value built in main and handed to NewCatalog, never a global.
//
// The host calls Decode for every enabled entry of a file before anything
// runs (validate calls nothing else), then Start once per instance it runs.
// Implementations must be safe for concurrent use: the host starts instances
// in parallel.
//
// The lifecycle of an instance, as the host drives it:
//
//  1. The host reserves the instance's claims (Spec.Claims), then calls
//     Start with a fresh tool.Source (Env.Tools) and a lifetime context.
//  2. It waits for Ready, at most Spec.StartupTimeout (a strict instance,
//     Spec.Strict, at most ShutdownTimeout more). The instance has started
//     when Ready is closed, StartErr returns nil and Status reports
//     StateReady. An added entry that has not started by then keeps trying
//     in the background; one whose StartErr is not nil is closed.
//  3. Make before break: when an entry's config changes (or an added entry
//     takes the claims of a removed one, an id renamed), the new instance
//     starts while the old one keeps serving. Its Env.Tools is the old
//     instance's Source's Successor and the claims are shared by the pair.
//     The new instance's first Publish replaces the old instance's tools in
//     one atomic swap; the old instance's later Publish calls then fail
//     with tool.ErrSuperseded and it serves only the calls already in
//     flight. Once the new instance has started (step 2), or published
//     at all by the time readiness stops waiting (its tools have taken over
//     and the old instance can no longer publish), the claims move to it,
//     the old instance is drained (Drainer, at most ShutdownTimeout) and
//     stopped (step 4). If it does not start and has published nothing, or
//     Start fails, the host closes its Source (so it can no longer take
//     over) and stops it; the old instance never noticed and keeps running.
//  4. To stop an instance the host cancels its lifetime, calls Close (at most
//     ShutdownTimeout; a slower Close goes on in the background), then
//     closes its Env.Tools and releases its claims.
type Kind interface {
	// Name is the entry name that selects this kind, like "mcp-client".
	Name() string
	// Decode reads and validates an entry's config mapping (nil when the
	// entry has none), expanding ${VAR} with lookup. It has no side effects:
	// it starts nothing, opens nothing and logs nothing, so a file can be
	// validated, and a reload rejected, without touching what runs. Errors
	// should carry yamlconf positions (FormatErrors places the rest at the
	// entry) and must never quote an expanded value.
	Decode(config *yaml.Node, lookup func(name string) (string, bool)) (Spec, error)
	// Start starts an instance of spec and returns without waiting for it
	// to be ready (the host waits on Instance.Ready, in parallel with the
	// other instances). The instance publishes its tools through env.Tools
	// and only through it, so that a successor can take them over in one
	// swap. lifetime is cancelled when the host stops the instance, just
	// before it calls Close; work the instance runs in the background may
	// end with it. An error means nothing was started and nothing needs
	// closing (the host closes env.Tools).
	Start(lifetime context.Context, spec Spec, env Env) (Instance, error)
}

// CredentialNamer is a Kind whose entries may name the variables that
// hold their credentials. CredentialVars reads them from an entry's
// config as written, which may be nil or not what Decode accepts: it is
// asked of every entry, disabled and invalid ones too, as a secret is one
// whether or not its entry runs now (Plan.CredentialVars).
type CredentialNamer interface {
	CredentialVars(config *yaml.Node) []string
}

// Spec is an entry's config as decoded by its Kind: what the host needs to
// know to run, diff and describe it.
type Spec struct {
	// Config is the kind's own decoded config, handed back to Start. The
	// host fingerprints its JSON encoding to tell a changed entry from an
	// unchanged one, so it should be JSON-encodable with its defaults
	// filled in (so that spelling out a default is not a change).
	Config any
	// Name is a short display name (mcp-client: the serverName).
	Name string
	// Summary is a short description for listings, free of secrets
	// (mcp-client: the transport).
	Summary string
	// Claims are names this instance must hold alone within its host
	// (mcp-client: its serverName). Two entries of one file with the same
	// claim are a config error; at run time the host reserves them before
	// Start and releases them after the instance closed (an instance and
	// its replacement share them until the replacement has started).
	Claims []Claim
	// StartupTimeout bounds how long readiness waits for this instance's
	// first attempt; 0 waits until the instance is ready.
	StartupTimeout time.Duration
	// Strict marks an instance whose failed first attempt is final
	// (mcp-client: failOnStartupError). Apply then waits for the attempt to
	// settle even past StartupTimeout (at most ShutdownTimeout more), so it
	// knows whether the instance failed for good.
	Strict bool
}

// Claim is one name an instance holds alone within a host: Key is the
// config field it comes from (like "serverName", so errors can point at
// config.serverName) and Value the name.
type Claim struct {
	Key, Value string
}

// Env is what the host gives an instance.
type Env struct {
	// ID is the entry's id.
	ID string
	// Tools is the instance's registration in the host's registry: the
	// instance publishes its tools through it (Publish replaces them all in
	// one swap) and through nothing else. For an instance that replaces
	// another (see Kind, step 3) it is the old instance's Source's
	// Successor: its first Publish takes the old tools' place. The host
	// closes it after Close returns; an instance may close it itself.
	Tools *tool.Source
	// Registry is the host's registry, for reading (Get, List, Watch).
	// Tools registered on it directly would not take part in a reload's
	// atomic swap (and would clash with the old instance's).
	Registry *tool.Registry
	// Logger is the host's logger tagged with the entry (entry=<id>).
	Logger *slog.Logger
	// Source names the file the entry came from, for messages.
	Source string
}

// Instance is one running entry. All methods are safe for concurrent use.
// See Kind for the order in which the host calls them.
type Instance interface {
	// Ready is closed when the instance's first attempt has settled,
	// whether it succeeded or not.
	Ready() <-chan struct{}
	// StartErr reports, once Ready is closed, whether the instance failed to
	// start for good (mcp-client: failOnStartupError and a failed first
	// attempt): it will never work, the host reports it and closes it. nil
	// means started, or still trying in the background (Status tells
	// which: only StateReady counts as started for a replacement).
	StartErr() error
	// Status returns a snapshot for display; the host fills ID and Plugin.
	// The host also reads it to decide whether a replacement has started.
	Status() Status
	// Close stops the instance and removes its tools. The host calls it
	// exactly once, after cancelling its lifetime; it must return even if
	// the instance never became ready.
	Close() error
}

// Drainer is an Instance that can wait for its calls in flight. When a
// replacement has taken over an instance's tools (no new call reaches it),
// the host calls Drain before Close, with a context that ends after
// ShutdownTimeout or when the host is closed, so that calls already running
// finish rather than being cut off by Close. Drain returns nil once no call
// is in flight, or ctx's error. An Instance that is not a Drainer is closed
// right away.
type Drainer interface {
	Drain(ctx context.Context) error
}

// State is where an entry stands, as status shows it.
type State string

// The states of an entry.
const (
	// StateStarting: the first attempt has not settled yet and its startup
	// timeout has not passed.
	StateStarting State = "starting"
	// StateReady: running, tools registered.
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
	// person (mcpbridge login); its tools are absent. Status.Err says
	// which command to run.
	StateNeedsLogin State = "needs-login"
	// StateDisabled: the entry has disabled: true.
	StateDisabled State = "disabled"
	// StateClosed: the instance was closed.
	StateClosed State = "closed"
)

// SandboxStatus describes a sandboxed child (docs/sandbox.md).
type SandboxStatus struct {
	// LandlockABI is the kernel's Landlock ABI version the child is
	// confined at; 0 when the kernel has none and the entry allowed a
	// best effort (it then runs unconfined by Landlock).
	LandlockABI int
	// Network reports whether the child may use the network; without it,
	// the child has a network namespace of its own.
	Network bool
	// Denied says, one line each, what the sandbox has denied the running
	// child and what to add to the sandbox block to allow it.
	Denied []string `json:",omitempty"`
}

// Status is a snapshot of one entry for display and health checks. Fields a
// kind does not know stay zero.
type Status struct {
	// ID and Plugin are the entry's id and name (filled by the host).
	ID, Plugin string
	// State is where the entry stands; Err says why when it is not ready.
	State State
	Err   string
	// Name is the display name (mcp-client: serverName); Transport how the
	// instance reaches its server.
	Name, Transport string
	// PeerName and PeerVersion are what the peer (an MCP server) reported
	// about itself, never the configured Name; ProtocolVersion is the
	// negotiated protocol version.
	PeerName, PeerVersion, ProtocolVersion string
	// PID is the instance's child process (and process group) ID, 0 when
	// it has none or it is down.
	PID int
	// Sandbox says how the instance's child is (or, while it is not
	// running, would be) confined; nil when the entry has no sandbox.
	Sandbox *SandboxStatus
	// Tools is the number of tools registered for the entry.
	Tools int
	// Attempt is the current reconnect attempt of MaxAttempts (0 when
	// connected).
	Attempt, MaxAttempts int
	// Reconnects counts the reconnect attempts the instance has begun since
	// it started (it only grows; a replaced instance starts at 0): what a
	// metrics scrape reports as a counter.
	Reconnects int
	// Connect is how long spawning or connecting, including the protocol
	// handshake, took; Discover how long listing and registering the tools
	// took (both of the current connection).
	Connect, Discover time.Duration
	// PinNotes are the definitions that differ from their pins (or have
	// none while a lock exists), one line each: "withheld tool NAME: why",
	// or "published tool NAME (pin: warn): why".
	PinNotes []string `json:",omitempty"`
	// Scan is what the definition scan found at the last sync; nil when
	// it found nothing or is off.
	Scan *ScanReport
	// Stderr is what the instance's child processes wrote on stderr
	// lately, oldest first, one line each, escaped and with secrets
	// redacted; nil when none (mcpbridge logs shows it).
	Stderr []string `json:",omitempty"`
	// Refused is the entry's config on disk that the last reload refused,
	// the previous config staying in force; nil when what runs is what
	// the config says.
	Refused *Refusal `json:",omitempty"`
}

// Refusal is a reload that did not put an entry's config in force, or
// could not read or parse the file at all (Host.FileRefusal): the
// previous config keeps running until a reload applies one.
type Refusal struct {
	// Err says which config did not start, why, and what runs instead
	// (a *StartError's text).
	Err string
	// Since is when the config was first refused for that reason; a
	// reload refusing it again for the same reason keeps it.
	Since time.Time
}

// String says what is refused, since when, and why, on one line.
func (r *Refusal) String() string {
	return fmt.Sprintf("since %s the config on disk is refused: %s", r.Since.UTC().Format(time.RFC3339), r.Err)
}

// ScanReport is what the definition scan (docs/scan.md) found in an entry's
// tools and prompts.
type ScanReport struct {
	// Findings, each definition's strongest first.
	Findings []ScanFinding `json:"findings"`
	// Held names the tools and prompts withheld for their findings
	// (scan: hold), as the server lists them.
	Held []string `json:"held,omitempty"`
}

// ScanFinding is one finding of the definition scan: in Tool (a prompt when
// Kind is "prompt") of Server, at Field (a JSON pointer into the
// definition), Rule matched Excerpt (escaped) with Severity low, medium or
// high.
type ScanFinding struct {
	Tool     string `json:"tool"`
	Kind     string `json:"kind,omitempty"`
	Server   string `json:"server"`
	Severity string `json:"severity"`
	Rule     string `json:"rule"`
	Field    string `json:"field"`
	Excerpt  string `json:"excerpt"`
}
