package host

import (
	"context"
	"encoding/json"
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
	Also      string `yaml:"also"`      // a second one
	StartErr  string `yaml:"startErr"`  // Kind.Start refuses
	Fail      string `yaml:"fail"`      // Instance.StartErr after Ready
	Hold      bool   `yaml:"hold"`      // Ready never closes until released
	Strict    bool   `yaml:"strict"`    // Spec.Strict
	TimeoutMs int    `yaml:"timeoutMs"` // Spec.StartupTimeout
	SlowClose bool   `yaml:"slowClose"` // Close blocks until released
	CloseErr  string `yaml:"closeErr"`  // Close fails
	Secret    string `yaml:"secret"`    // expanded ${VAR}, never shown
	Down      string `yaml:"down"`      // the first attempt fails, not for good: retrying, no tools
	SlowCall  bool   `yaml:"slowCall"`  // the tool's calls run until released (or Close cuts them)
	Early     bool   `yaml:"early"`     // publishes its tool in Start, before Ready (which hold still holds)
}

// toolName is the one tool a fake instance publishes: named after its claim
// (so an instance and its successor publish the same name), else its id.
func (c fakeConfig) toolName(id string) string {
	if c.Claim != "" {
		return "t-" + c.Claim
	}
	return "t-" + id
}

// fakeKind records what the host does with its instances, in order.
type fakeKind struct {
	name    string
	release chan struct{} // closing it releases held readiness and slow closes

	mu      sync.Mutex
	events  []string
	live    map[string]int // "<id>/<value>" → running instances
	closing int            // Close calls begun
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
	if c.Also != "" {
		spec.Claims = append(spec.Claims, Claim{Key: "also", Value: c.Also})
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

// closes returns how many Close calls have begun.
func (k *fakeKind) closes() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.closing
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
	in := &fakeInstance{k: k, key: key, cfg: c, lifetime: lifetime, ready: make(chan struct{}), closing: make(chan struct{}), src: env.Tools}
	settle := func() {
		if c.Fail == "" && c.Down == "" {
			in.publish(id)
		}
		close(in.ready)
	}
	if c.Early {
		in.publish(id)
	}
	if c.Hold {
		go func() {
			select {
			case <-k.release:
			case <-lifetime.Done():
			}
			settle()
		}()
	} else {
		settle()
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
	closing  chan struct{} // closed by Close: cuts calls in flight
	src      *tool.Source

	mu       sync.Mutex
	inflight int
}

// publish registers the instance's tool, whose calls answer with the
// instance's key.
func (in *fakeInstance) publish(id string) {
	_ = in.src.Publish(tool.Tool{
		Name: in.cfg.toolName(id),
		Execute: func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
			in.mu.Lock()
			in.inflight++
			in.mu.Unlock()
			defer func() {
				in.mu.Lock()
				in.inflight--
				in.mu.Unlock()
			}()
			if in.cfg.SlowCall {
				select {
				case <-in.k.release:
				case <-in.closing:
					return tool.Output{}, errors.New("instance " + in.key + " closed during the call")
				case <-ctx.Done():
					return tool.Output{}, ctx.Err()
				}
			}
			return tool.Output{Content: []tool.Content{tool.Text(in.key)}}, nil
		},
	})
}

func (in *fakeInstance) Ready() <-chan struct{} { return in.ready }

func (in *fakeInstance) StartErr() error {
	if in.cfg.Fail != "" {
		return errors.New(in.cfg.Fail)
	}
	return nil
}

func (in *fakeInstance) Status() Status {
	st := Status{State: StateReady, Name: "fake-" + in.cfg.Value, Transport: "fake", Tools: in.src.Len()}
	select {
	case <-in.ready:
		if in.cfg.Down != "" {
			st.State, st.Err = StateReconnecting, in.cfg.Down
		}
	default:
		st.State = StateStarting
	}
	return st
}

// Drain waits until no call is in flight.
func (in *fakeInstance) Drain(ctx context.Context) error {
	for {
		in.mu.Lock()
		n := in.inflight
		in.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

func (in *fakeInstance) Close() error {
	if in.lifetime.Err() == nil {
		return errors.New("closed before its lifetime ended")
	}
	close(in.closing)
	in.k.mu.Lock()
	in.k.closing++
	in.k.mu.Unlock()
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

// sortedCloses returns events with each run of consecutive closes sorted:
// disposals run in parallel, so only their set is fixed.
func sortedCloses(events []string) []string {
	out := slices.Clone(events)
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && strings.HasPrefix(out[j], "close ") {
			j++
		}
		slices.Sort(out[i:j])
		i = max(j, i+1)
	}
	return out
}
