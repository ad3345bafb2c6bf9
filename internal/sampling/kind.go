package sampling

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/host"
)

// Provider answers sampling requests with the entry that runs: a model
// entry before a sampling entry (the newer form wins when a file has
// both), and of the same kind the latest to start, so a reloaded entry
// takes over at once. Build one per host and hand it to NewKind; it is
// safe for concurrent use.
type Provider struct {
	mu      sync.Mutex
	live    []*instance // started and not closed, in the order they started
	refusal error       // set by Refuse: every request fails with it
}

// NewProvider returns a Provider with no entry running.
func NewProvider() *Provider { return &Provider{} }

// ErrNotConfigured refuses a request when no sampling entry runs.
var ErrNotConfigured = errors.New("sampling is not configured: add a `name: sampling` entry to the config file")

// Refuse makes every request fail with err (nil: answer again), whatever
// entry runs: the config has an invalid model or sampling entry (err
// says where), and no other entry, nor a default, answers in its place,
// since its endpoint may be where the user meant no data to go.
func (p *Provider) Refuse(err error) {
	p.mu.Lock()
	p.refusal = err
	p.mu.Unlock()
}

// refused is Refuse's error.
func (p *Provider) refused() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refusal
}

// Sample answers the sampling/createMessage request of server (its params
// as sent) with the model of the running entry.
func (p *Provider) Sample(ctx context.Context, server string, params json.RawMessage) (json.RawMessage, error) {
	if err := p.refused(); err != nil {
		return nil, fmt.Errorf("sampling is refused: the config's model or sampling entry is invalid, and no other endpoint answers in its place: %w", err)
	}
	cur := p.current()
	if cur == nil {
		return nil, ErrNotConfigured
	}
	return cur.client.sample(ctx, server, params)
}

// current is the entry that answers: the newest model entry, else the
// newest sampling entry; nil when none runs.
func (p *Provider) current() *instance {
	p.mu.Lock()
	defer p.mu.Unlock()
	var cur *instance
	for _, in := range p.live {
		if cur == nil || in.kind == ModelKind || cur.kind != ModelKind {
			cur = in
		}
	}
	return cur
}

// set adds in to the entries that run.
func (p *Provider) set(in *instance) {
	p.mu.Lock()
	p.live = append(p.live, in)
	p.mu.Unlock()
}

// clear removes in: the entry that answers is then the best of the others,
// such as the sampling entry that stays when a reload drops the model entry.
func (p *Provider) clear(in *instance) {
	p.mu.Lock()
	p.live = slices.DeleteFunc(p.live, func(x *instance) bool { return x == in })
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
	// Sleep waits between the retries of a busy API; nil: a timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Kind is the sampling or the model plugin kind for a host.Catalog.
type Kind struct {
	opts KindOptions
	name string
}

// NewKind returns the sampling kind (`name: sampling`).
func NewKind(opts KindOptions) *Kind { return newKind(opts, KindName) }

// NewModelKind returns the model kind (`name: model`): the same config
// plus strict, answering sampling like a sampling entry (and in its place
// when a file has both) and configuring the agent's model.
func NewModelKind(opts KindOptions) *Kind { return newKind(opts, ModelKind) }

func newKind(opts KindOptions, name string) *Kind {
	if opts.Lookup == nil {
		opts.Lookup = func(string) (string, bool) { return "", false }
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	return &Kind{opts: opts, name: name}
}

// Name returns KindName or ModelKind.
func (k *Kind) Name() string { return k.name }

// Decode reads an entry's config. The entry claims its kind's name, so a
// file holds one of each.
func (k *Kind) Decode(n *yaml.Node, lookup func(string) (string, bool)) (host.Spec, error) {
	cfg, err := Decode(n, lookup, k.name)
	if err != nil {
		return host.Spec{}, err
	}
	return host.Spec{
		Config:  cfg,
		Name:    k.name,
		Summary: "chat-completions " + cfg.Model,
		Claims:  []host.Claim{{Key: "name", Value: k.name}},
	}, nil
}

// Start makes the entry the provider's; it is ready at once (nothing is
// contacted until a server asks).
func (k *Kind) Start(_ context.Context, spec host.Spec, env host.Env) (host.Instance, error) {
	cfg, ok := spec.Config.(Config)
	if !ok {
		return nil, errors.New("sampling: the spec was not decoded by this kind")
	}
	api := cfg.Client(k.opts.Lookup, k.opts.HTTPClient, env.Logger)
	api.Sleep = k.opts.Sleep
	in := &instance{
		provider: k.opts.Provider,
		kind:     k.name,
		client:   &client{cfg: cfg, api: api, lookup: k.opts.Lookup, log: env.Logger},
		ready:    make(chan struct{}),
	}
	close(in.ready)
	in.provider.set(in)
	return in, nil
}

// instance is one running sampling entry.
type instance struct {
	provider *Provider
	kind     string
	client   *client
	ready    chan struct{}
	isClosed atomic.Bool
}

func (in *instance) Ready() <-chan struct{} { return in.ready }
func (in *instance) StartErr() error        { return nil }

// Status shows the model that answers.
func (in *instance) Status() host.Status {
	st := host.Status{State: host.StateReady, Name: in.kind, Transport: "chat-completions", PeerName: in.client.cfg.Model}
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

// ModelSpec returns the spec of a model entry with cfg, as Decode would
// have made it: for a command that settles its model from flags.
func ModelSpec(cfg Config) host.Spec {
	return host.Spec{Config: cfg, Name: ModelKind, Summary: "chat-completions " + cfg.Model,
		Claims: []host.Claim{{Key: "name", Value: ModelKind}}}
}
