package sampling

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Provider answers sampling requests with the entry that runs: a model
// entry before a sampling entry (the newer form wins when a file has
// both), and of the same kind the latest to start, so a reloaded entry
// takes over at once. Build one per host and hand it to the entry kinds
// (internal/kinds/sampling and model), which Start entries; it is safe
// for concurrent use.
type Provider struct {
	mu      sync.Mutex
	live    []*Entry // started and not closed, in the order they started
	refusal error    // set by Refuse: every request fails with it
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
func (p *Provider) current() *Entry {
	p.mu.Lock()
	defer p.mu.Unlock()
	var cur *Entry
	for _, in := range p.live {
		if cur == nil || in.kind == ModelKind || cur.kind != ModelKind {
			cur = in
		}
	}
	return cur
}

// set adds in to the entries that run.
func (p *Provider) set(in *Entry) {
	p.mu.Lock()
	p.live = append(p.live, in)
	p.mu.Unlock()
}

// clear removes in: the entry that answers is then the best of the others,
// such as the sampling entry that stays when a reload drops the model entry.
func (p *Provider) clear(in *Entry) {
	p.mu.Lock()
	p.live = slices.DeleteFunc(p.live, func(x *Entry) bool { return x == in })
	p.mu.Unlock()
}

// Options configure how an entry reaches its endpoint. The zero value
// is useful.
type Options struct {
	// Lookup reads the API key's variable at each request; nil: none is
	// set.
	Lookup func(string) (string, bool)
	// HTTPClient sends the requests; nil: a client of its own.
	HTTPClient *http.Client
	// Sleep waits between the retries of a busy API; nil: a timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Start makes an entry of cfg answer for the provider: kind is KindName
// or ModelKind (a model entry answers before a sampling entry). It is
// ready at once: nothing is contacted until a server asks. log records
// each request. The entry answers until its Close.
func (p *Provider) Start(kind string, cfg Config, opts Options, log *slog.Logger) *Entry {
	if opts.Lookup == nil {
		opts.Lookup = func(string) (string, bool) { return "", false }
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	api := cfg.Client(opts.Lookup, opts.HTTPClient, log)
	api.Sleep = opts.Sleep
	e := &Entry{
		provider: p,
		kind:     kind,
		client:   &client{cfg: cfg, api: api, lookup: opts.Lookup, log: log},
	}
	p.set(e)
	return e
}

// Entry is one running sampling or model entry of a Provider.
type Entry struct {
	provider *Provider
	kind     string
	client   *client
	isClosed atomic.Bool
}

// Kind is the entry's kind: KindName or ModelKind.
func (e *Entry) Kind() string { return e.kind }

// Model is the model that answers for the entry.
func (e *Entry) Model() string { return e.client.cfg.Model }

// Closed reports whether Close was called.
func (e *Entry) Closed() bool { return e.isClosed.Load() }

// Close ends the entry: the best of the provider's others answers in its
// place. It is idempotent.
func (e *Entry) Close() {
	e.isClosed.Store(true)
	e.provider.clear(e)
}
