package host

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/tool"
)

// fakeConfig is the config of the fake kind: enough knobs to drive every
// reconcile path without a real server.
type fakeConfig struct {
	Value     string `yaml:"value"`     // changes the fingerprint
	Claim     string `yaml:"claim"`     // a name to hold alone
	StartErr  string `yaml:"startErr"`  // Kind.Start refuses
	Fail      string `yaml:"fail"`      // Instance.StartErr after Ready
	Hold      bool   `yaml:"hold"`      // Ready never closes until released
	Strict    bool   `yaml:"strict"`    // Spec.Strict
	TimeoutMs int    `yaml:"timeoutMs"` // Spec.StartupTimeout
	SlowClose bool   `yaml:"slowClose"` // Close blocks until released
	CloseErr  string `yaml:"closeErr"`  // Close fails
	Secret    string `yaml:"secret"`    // expanded ${VAR}, never shown
}

// fakeKind records what the host does with its instances, in order.
type fakeKind struct {
	name    string
	release chan struct{} // closing it releases held readiness and slow closes

	mu     sync.Mutex
	events []string
	live   map[string]int // "<id>/<value>" → running instances
}

func newFakeKind(t *testing.T, name string) *fakeKind {
	k := &fakeKind{name: name, release: make(chan struct{}), live: map[string]int{}}
	t.Cleanup(k.unblock)
	return k
}

func (k *fakeKind) unblock() {
	k.mu.Lock()
	defer k.mu.Unlock()
	select {
	case <-k.release:
	default:
		close(k.release)
	}
}

func (k *fakeKind) Name() string { return k.name }

func (k *fakeKind) Decode(n *yaml.Node, lookup func(string) (string, bool)) (Spec, error) {
	var c fakeConfig
	if n != nil {
		if err := n.Decode(&c); err != nil {
			return Spec{}, err
		}
	}
	if c.Value == "bad" {
		return Spec{}, errors.New("value: bad is not allowed")
	}
	if strings.HasPrefix(c.Secret, "$") {
		v, ok := lookup(strings.Trim(c.Secret, "${}"))
		if !ok {
			return Spec{}, errors.New("secret: variable is not set")
		}
		c.Secret = v
	}
	spec := Spec{Config: c, Name: "fake-" + c.Value, Summary: "fake", StartupTimeout: time.Duration(c.TimeoutMs) * time.Millisecond, Strict: c.Strict}
	if c.Claim != "" {
		spec.Claims = []Claim{{Key: "claim", Value: c.Claim}}
	}
	return spec, nil
}

func (k *fakeKind) record(ev string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.events = append(k.events, ev)
}

// takeEvents returns and forgets the events so far.
func (k *fakeKind) takeEvents() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	ev := k.events
	k.events = nil
	return ev
}

func (k *fakeKind) running() map[string]int {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[string]int{}
	for key, n := range k.live {
		if n > 0 {
			out[key] = n
		}
	}
	return out
}

func (k *fakeKind) Start(lifetime context.Context, spec Spec, env Env) (Instance, error) {
	c := spec.Config.(fakeConfig)
	id := env.ID
	if c.StartErr != "" {
		k.record("refuse " + id + "/" + c.Value)
		return nil, errors.New(c.StartErr)
	}
	key := id + "/" + c.Value
	k.record("start " + key)
	k.mu.Lock()
	k.live[key]++
	k.mu.Unlock()
	in := &fakeInstance{k: k, key: key, cfg: c, lifetime: lifetime, ready: make(chan struct{})}
	if c.Hold {
		go func() {
			select {
			case <-k.release:
			case <-lifetime.Done():
			}
			close(in.ready)
		}()
	} else {
		close(in.ready)
	}
	env.Logger.Info("fake started")
	return in, nil
}

type fakeInstance struct {
	k        *fakeKind
	key      string
	cfg      fakeConfig
	lifetime context.Context
	ready    chan struct{}
}

func (in *fakeInstance) Ready() <-chan struct{} { return in.ready }

func (in *fakeInstance) StartErr() error {
	if in.cfg.Fail != "" {
		return errors.New(in.cfg.Fail)
	}
	return nil
}

func (in *fakeInstance) Status() Status {
	st := Status{State: StateReady, Name: "fake-" + in.cfg.Value, Transport: "fake", Tools: 1}
	select {
	case <-in.ready:
	default:
		st.State = StateStarting
	}
	return st
}

func (in *fakeInstance) Close() error {
	if in.lifetime.Err() == nil {
		return errors.New("closed before its lifetime ended")
	}
	if in.cfg.SlowClose {
		<-in.k.release
	}
	in.k.mu.Lock()
	in.k.live[in.key]--
	in.k.mu.Unlock()
	in.k.record("close " + in.key)
	if in.cfg.CloseErr != "" {
		return errors.New(in.cfg.CloseErr)
	}
	return nil
}

// fakeHost is a Host over a fake kind, with its log.
type fakeHost struct {
	*Host
	kind *fakeKind
	log  *mcptest.Log
}

func newFakeHost(t *testing.T, opts Options) *fakeHost {
	t.Helper()
	k := newFakeKind(t, "fake")
	log := mcptest.NewLog()
	if opts.Catalog == nil {
		opts.Catalog = NewCatalog(k)
	}
	opts.Registry = tool.NewRegistry()
	opts.Logger = log.Logger()
	h, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		k.unblock()
		h.Close()
		h.wait()
	})
	return &fakeHost{h, k, log}
}

// plan parses src with the host's catalog or fails the test.
func (fh *fakeHost) plan(t *testing.T, src string) *Plan {
	t.Helper()
	p, err := fh.opts.Catalog.Parse("f.yaml", []byte(src), func(k string) (string, bool) {
		if k == "SECRET" {
			return "hunter2", true
		}
		return "", false
	})
	if err != nil {
		t.Fatalf("Parse:\n%v", err)
	}
	return p
}

// apply parses and applies src.
func (fh *fakeHost) apply(t *testing.T, src string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return fh.Apply(ctx, fh.plan(t, src))
}

// states maps id → state (and error, when there is one).
func (fh *fakeHost) states() map[string]string {
	out := map[string]string{}
	for _, st := range fh.Status() {
		s := string(st.State)
		if st.Err != "" {
			s += ": " + st.Err
		}
		out[st.ID] = s
	}
	return out
}

// sortedCloses returns events with the leading closes sorted: disposals
// run in parallel, so only their set is fixed.
func sortedCloses(events []string) []string {
	n := 0
	for n < len(events) && strings.HasPrefix(events[n], "close ") {
		n++
	}
	out := slices.Clone(events)
	slices.Sort(out[:n])
	return out
}
