// Package view is the tool-search entry kind: the entry of a config
// file that turns on deferred loading (package toolview) for its host.
//
//   - id: search
//     name: tool-search
//     config:
//     mode: auto            # auto (default), on or off
//     threshold: 8000       # tokens; default 10% of contextWindow
//     contextWindow: 128000 # tokens (default 128000)
//     pinned: [mcp__github__create_issue, "mcp__time__*"]
//     alwaysLoad: [fs]      # servers whose every tool stays visible
//
// (An mcp-client entry's own alwaysLoad: true does what the alwaysLoad
// list does, for its server.) A pinned name that matches no tool of the
// server it names is logged as a warning once the server's tools are in.
//
// One such entry per file (it claims the name tool-search). Its instance
// publishes search_tools through the Source the host gives it, so a
// reload swaps it like any entry's tools; the harness reads the view with
// [Kind.View].
package view

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
	"github.com/mcpbridge/mcpbridge/tool"
	"github.com/mcpbridge/mcpbridge/toolview"
)

// Name is the entry name that selects the kind.
const Name = "tool-search"

// Kind is the tool-search kind. Build one per host and keep it: View
// returns the view of its running instance.
type Kind struct {
	mu      sync.Mutex
	current *toolview.View // guarded by mu
}

// NewKind returns the kind.
func NewKind() *Kind { return &Kind{} }

// Name implements host.Kind.
func (k *Kind) Name() string { return Name }

// View returns the view of the running tool-search entry, or nil when
// there is none.
func (k *Kind) View() *toolview.View {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.current
}

// Decode implements host.Kind.
func (k *Kind) Decode(config *yaml.Node, lookup func(string) (string, bool)) (host.Spec, error) {
	cfg, err := DecodeConfig(config, lookup)
	if err != nil {
		return host.Spec{}, err
	}
	if cfg.Mode == "" {
		cfg.Mode = toolview.ModeAuto
	}
	return host.Spec{
		Config:  cfg,
		Name:    Name,
		Summary: string(cfg.Mode),
		Claims:  []host.Claim{{Key: "name", Value: Name}},
	}, nil
}

// DecodeConfig reads an entry's config mapping (nil: every default).
func DecodeConfig(n *yaml.Node, lookup func(string) (string, bool)) (toolview.Config, error) {
	var cfg toolview.Config
	d := yamlconf.NewDecoder(lookup)
	m, ok := d.Map(n, "config")
	if !ok {
		return cfg, d.Err()
	}
	m.Reject("mode", "threshold", "contextWindow", "pinned", "alwaysLoad")
	if s, ok := m.String("mode"); ok {
		cfg.Mode = toolview.Mode(s)
		if err := (toolview.Config{Mode: cfg.Mode}).Check(); err != nil {
			m.Errorf("mode", "must be auto, on or off, got %q", s)
		}
	}
	if v, ok := m.Int("threshold", 1, math.MaxInt32); ok {
		cfg.Threshold = int(v)
	}
	if v, ok := m.Int("contextWindow", 1, math.MaxInt32); ok {
		cfg.ContextWindow = int(v)
	}
	cfg.Pinned, _ = m.StringList("pinned")
	for _, p := range cfg.Pinned {
		if err := (toolview.Config{Pinned: []string{p}}).Check(); err != nil {
			m.Errorf("pinned", "%q is not a valid glob", p)
		}
	}
	cfg.AlwaysLoad, _ = m.StringList("alwaysLoad")
	return cfg, d.Err()
}

// Start implements host.Kind: the view publishes search_tools through
// env.Tools.
func (k *Kind) Start(_ context.Context, spec host.Spec, env host.Env) (host.Instance, error) {
	cfg, ok := spec.Config.(toolview.Config)
	if !ok {
		return nil, fmt.Errorf("tool-search: the entry's config is a %T, not a toolview.Config (decode the entry with this kind)", spec.Config)
	}
	v, err := toolview.NewIn(env.Tools, cfg)
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	if k.current != nil {
		v.Inherit(k.current) // a reload: what the model has, it keeps
	}
	k.current = v
	k.mu.Unlock()
	ready := make(chan struct{})
	close(ready)
	in := &instance{kind: k, view: v, mode: cfg.Mode, ready: ready, done: make(chan struct{})}
	if len(cfg.Pinned) > 0 && env.Registry != nil && env.Logger != nil {
		in.watching.Go(func() { in.warnUnmatched(env.Registry, env.Logger) })
	}
	return in, nil
}

// instance is one running tool-search entry; it is ready at once.
type instance struct {
	kind     *Kind
	view     *toolview.View
	mode     toolview.Mode
	ready    chan struct{}
	done     chan struct{} // closed by Close
	watching sync.WaitGroup
}

// warnUnmatched logs, at each change of reg until Close, the pinned names
// that match no tool of the server they name (toolview.View.Unmatched):
// a typo would otherwise leave the tool hidden without a word.
func (in *instance) warnUnmatched(reg *tool.Registry, log *slog.Logger) {
	changed, stop := reg.Watch()
	defer stop()
	for {
		for _, u := range in.view.Unmatched() {
			args := []any{"pinned", u.Pinned, "server", u.Server}
			if u.Nearest != "" {
				args = append(args, "did_you_mean", u.Nearest)
			}
			log.Warn("pinned name matches no tool of its server: correct it in the tool-search entry's pinned list", args...)
		}
		select {
		case <-changed:
		case <-in.done:
			return
		}
	}
}

func (in *instance) Ready() <-chan struct{} { return in.ready }
func (in *instance) StartErr() error        { return nil }

func (in *instance) Status() host.Status {
	n := 0
	if in.mode != toolview.ModeOff {
		n = 1
	}
	return host.Status{State: host.StateReady, Name: Name, Transport: "builtin", Tools: n}
}

// Close removes search_tools and, unless a successor took its place,
// the kind's view.
func (in *instance) Close() error {
	close(in.done)
	in.watching.Wait()
	in.view.Close()
	in.kind.mu.Lock()
	if in.kind.current == in.view {
		in.kind.current = nil
	}
	in.kind.mu.Unlock()
	return nil
}
