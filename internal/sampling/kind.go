package sampling

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/host"
)

// Provider answers sampling requests with the sampling entry that runs
// (the latest to start, so a reloaded entry takes over at once). Build one
// per host and hand it to NewKind; it is safe for concurrent use.
type Provider struct {
	mu  sync.Mutex
	cur *instance
}

// NewProvider returns a Provider with no entry running.
func NewProvider() *Provider { return &Provider{} }

// ErrNotConfigured refuses a request when no sampling entry runs.
var ErrNotConfigured = errors.New("sampling is not configured: add a `name: sampling` entry to the config file")

// Sample answers the sampling/createMessage request of server (its params
// as sent) with the model of the running entry.
func (p *Provider) Sample(ctx context.Context, server string, params json.RawMessage) (json.RawMessage, error) {
	p.mu.Lock()
	cur := p.cur
	p.mu.Unlock()
	if cur == nil {
		return nil, ErrNotConfigured
	}
	return cur.client.sample(ctx, server, params)
}

func (p *Provider) set(in *instance) {
	p.mu.Lock()
	p.cur = in
	p.mu.Unlock()
}

// clear forgets in unless a newer entry took its place.
func (p *Provider) clear(in *instance) {
	p.mu.Lock()
	if p.cur == in {
		p.cur = nil
	}
	p.mu.Unlock()
}

// KindOptions configure the sampling kind.
type KindOptions struct {
	// Provider is where started entries go; required.
	Provider *Provider
	// Lookup reads the API key's variable at each request; nil: none is
	// set.
	Lookup func(string) (string, bool)
	// HTTPClient sends the requests; nil: a client of its own.
	HTTPClient *http.Client
}

// Kind is the sampling plugin kind for a host.Catalog.
type Kind struct{ opts KindOptions }

// NewKind returns the sampling kind.
func NewKind(opts KindOptions) *Kind {
	if opts.Lookup == nil {
		opts.Lookup = func(string) (string, bool) { return "", false }
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	return &Kind{opts: opts}
}

// Name returns KindName.
func (k *Kind) Name() string { return KindName }

// Decode reads an entry's config. The entry claims the name "sampling",
// so a file holds one.
func (k *Kind) Decode(n *yaml.Node, lookup func(string) (string, bool)) (host.Spec, error) {
	cfg, err := Decode(n, lookup)
	if err != nil {
		return host.Spec{}, err
	}
	return host.Spec{
		Config:  cfg,
		Name:    KindName,
		Summary: "chat-completions " + cfg.Model,
		Claims:  []host.Claim{{Key: "name", Value: KindName}},
	}, nil
}

// Start makes the entry the provider's; it is ready at once (nothing is
// contacted until a server asks).
func (k *Kind) Start(_ context.Context, spec host.Spec, env host.Env) (host.Instance, error) {
	cfg, ok := spec.Config.(Config)
	if !ok {
		return nil, errors.New("sampling: the spec was not decoded by this kind")
	}
	in := &instance{
		provider: k.opts.Provider,
		client:   &client{cfg: cfg, lookup: k.opts.Lookup, http: k.opts.HTTPClient, log: env.Logger},
		ready:    make(chan struct{}),
	}
	close(in.ready)
	in.provider.set(in)
	return in, nil
}

// instance is one running sampling entry.
type instance struct {
	provider *Provider
	client   *client
	ready    chan struct{}
	isClosed atomic.Bool
}

func (in *instance) Ready() <-chan struct{} { return in.ready }
func (in *instance) StartErr() error        { return nil }

// Status shows the model that answers.
func (in *instance) Status() host.Status {
	st := host.Status{State: host.StateReady, Name: KindName, Transport: "chat-completions", PeerName: in.client.cfg.Model}
	if in.isClosed.Load() {
		st.State = host.StateClosed
	}
	return st
}

func (in *instance) Close() error {
	in.isClosed.Store(true)
	in.provider.clear(in)
	return nil
}
