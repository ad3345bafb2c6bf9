// Package client is the mcp-client entry kind of a host.Catalog: each
// entry `name: mcp-client` of a config file becomes one mcpclient.Server.
// Like every entry kind (internal/kinds), it is the adapter between the
// host and a library package, so that the library (here the client)
// stands without the plugin host and its file watching.
package client

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/mcpclient"
)

// Name is the name that selects this kind in a config file
// entry (`name: mcp-client`).
const Name = "mcp-client"

// KindOptions configure the mcp-client plugin kind. The zero value is
// useful.
type KindOptions struct {
	// Server holds the Options every server the kind starts shares
	// (Environ, OneShot, MaxResultBytes, CloseGrace, TermGrace,
	// NewTransport). Its Registry, Source and Logger are ignored: the kind
	// fills them for each entry from host.Env.
	Server mcpclient.Options
	// NewTransport, when set, may connect a server somewhere else than its
	// Config says (tests: in-process servers): it returns the
	// Options.NewTransport for cfg's server, or nil for Server.NewTransport
	// (nil too: the Config's transport).
	NewTransport func(cfg mcpclient.Config) func() (mcp.Transport, error)
}

// Kind is the mcp-client plugin kind for a host.Catalog: each entry
// `name: mcp-client` becomes one mcpclient.Server. Build it in main with
// NewKind.
type Kind struct {
	opts KindOptions
}

// NewKind returns the mcp-client kind. opts is copied.
func NewKind(opts KindOptions) *Kind { return &Kind{opts: opts} }

// Name returns Name.
func (k *Kind) Name() string { return Name }

// Decode decodes and validates an entry's config with
// mcpclient.DecodeConfig; it
// starts nothing.
func (k *Kind) Decode(config *yaml.Node, lookup func(name string) (string, bool)) (host.Spec, error) {
	cfg, err := mcpclient.DecodeConfig(config, lookup)
	if err != nil {
		return host.Spec{}, err
	}
	return NewSpec(cfg)
}

// CredentialVars are the variables an entry's config as written names as
// holding credentials (mcpclient.CredentialRefs): host.CredentialNamer.
func (k *Kind) CredentialVars(config *yaml.Node) []string {
	return mcpclient.CredentialRefs(config)
}

// NewSpec validates cfg and describes it to a host: for servers configured
// in Go rather than in a file (the CLI's --url). The Spec's Config is cfg
// with its defaults filled in, so spelling out a default is not a change on
// reload; its claim is the serverName, unique per host.
func NewSpec(cfg mcpclient.Config) (host.Spec, error) {
	if err := cfg.Validate(); err != nil {
		return host.Spec{}, err
	}
	cfg = cfg.WithDefaults()
	return host.Spec{
		Config:         cfg,
		Name:           cfg.ServerName,
		Summary:        string(cfg.Transport),
		Claims:         []host.Claim{{Key: "serverName", Value: cfg.ServerName}},
		StartupTimeout: cfg.StartupTimeout,
		Strict:         cfg.FailOnStartupError,
	}, nil
}

// Start starts a mcpclient.Server for spec (from Decode or NewSpec) and returns at
// once; it connects in the background. The server publishes its tools
// through env.Tools (a host hands a replacement the old instance's
// Successor, so the new tools take the old ones' place in one swap) and
// closes it on Close; without env.Tools it registers in env.Registry.
// lifetime is not needed: the host always Closes the instance.
func (k *Kind) Start(_ context.Context, spec host.Spec, env host.Env) (host.Instance, error) {
	cfg, ok := spec.Config.(mcpclient.Config)
	if !ok {
		return nil, fmt.Errorf("mcp-client: the entry's config is a %T, not an mcpclient.Config (build the spec with mcpclient.NewSpec)", spec.Config)
	}
	opts := k.opts.Server // a copy
	opts.Registry, opts.Source, opts.Logger = env.Registry, env.Tools, env.Logger
	if k.opts.NewTransport != nil {
		if nt := k.opts.NewTransport(cfg); nt != nil {
			opts.NewTransport = nt
		}
	}
	srv, err := mcpclient.Start(cfg, opts)
	if err != nil {
		return nil, err
	}
	return &instance{srv: srv}, nil
}

// instance adapts a mcpclient.Server to host.Instance and host.Drainer.
type instance struct {
	srv *mcpclient.Server
}

func (in *instance) Ready() <-chan struct{} { return in.srv.Ready() }

// startErr is the first attempt's error once it settled, else nil.
func (in *instance) startErr() error {
	select {
	case <-in.srv.Ready():
		return in.srv.WaitReady(context.Background())
	default:
		return nil
	}
}

// StartErr is the failed first attempt of a server with
// failOnStartupError: it stopped for good. Other servers retry in the
// background, so their start never fails for the host.
func (in *instance) StartErr() error {
	if !in.srv.Config().FailOnStartupError {
		return nil
	}
	return in.startErr()
}

// Status is the server's status; the host fills ID and Plugin.
func (in *instance) Status() host.Status { return hostStatus(in.srv.Status()) }

// hostStatus is s as a host shows it (the states' values are the same).
func hostStatus(s mcpclient.Status) host.Status {
	return host.Status{
		State: host.State(s.State), Err: s.Err, Name: s.Name, Transport: s.Transport,
		PeerName: s.PeerName, PeerVersion: s.PeerVersion, ProtocolVersion: s.ProtocolVersion,
		PID: s.PID, Tools: s.Tools, Attempt: s.Attempt, MaxAttempts: s.MaxAttempts,
		Reconnects: s.Reconnects, Connect: s.Connect, Discover: s.Discover,
		PinNotes: s.PinNotes, Scan: hostScan(s.Scan), Sandbox: (*host.SandboxStatus)(s.Sandbox),
		Stderr: s.Stderr,
	}
}

// hostScan is r as a host shows it.
func hostScan(r *mcpclient.ScanReport) *host.ScanReport {
	if r == nil {
		return nil
	}
	out := &host.ScanReport{Held: r.Held, Findings: make([]host.ScanFinding, len(r.Findings))}
	for i, f := range r.Findings {
		out.Findings[i] = host.ScanFinding(f)
	}
	return out
}

// Drain waits for the server's calls in flight (mcpclient.Server.Drain): the host
// calls it once a replacement has taken over the instance's tools, so that
// calls still running on it finish rather than being cut off by Close.
func (in *instance) Drain(ctx context.Context) error { return in.srv.Drain(ctx) }

func (in *instance) Close() error { return in.srv.Close() }

// Interface guards.
var (
	_ host.Kind     = (*Kind)(nil)
	_ host.Instance = (*instance)(nil)
	_ host.Drainer  = (*instance)(nil)
)
