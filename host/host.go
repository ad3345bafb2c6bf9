package host

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mcpbridge/mcpbridge/tool"
)

// DefaultShutdownTimeout bounds how long disposing of one instance may take
// (instances are disposed of in parallel): long enough for an mcp-client's
// close ladder (2 s after closing stdin, 2 s after SIGTERM) and its 5 s
// close barrier.
const DefaultShutdownTimeout = 10 * time.Second

// ErrClosed is returned by Apply and WatchFile once Close was called.
var ErrClosed = errors.New("host: closed")

// Options configure a Host. Catalog and Registry are required; the zero
// value of every other field is useful.
type Options struct {
	// Catalog holds the kinds entries may name.
	Catalog *Catalog
	// Registry receives every instance's tools.
	Registry *tool.Registry
	// Logger receives the host's lines; each instance gets it tagged with
	// entry=<id>. nil discards them.
	Logger *slog.Logger
	// Lookup expands ${VAR} when WatchFile re-reads the file; nil means no
	// variable is set.
	Lookup func(name string) (string, bool)
	// Parse reads the file WatchFile re-reads; nil means
	// Catalog.ParseIsolated with Lookup (an invalid entry fails alone). A program that takes other config formats converts
	// them here.
	Parse func(path string, data []byte) (*Plan, error)
	// ShutdownTimeout bounds disposing of one instance; 0 means
	// DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// Debounce is how long WatchFile waits after the last change of the
	// file before it reloads; 0 means DefaultDebounce.
	Debounce time.Duration
}

// Host runs the entries of a Plan as plugin instances and keeps them in
// line with new plans (Apply) and with the file they came from (WatchFile).
//
// Create it with New; all methods are safe for concurrent use. Apply calls
// are serialized; Status never waits for one. Close disposes of every
// instance; after it, Apply and WatchFile return ErrClosed.
type Host struct {
	opts Options
	log  *slog.Logger

	// ctx ends when Close is called; it aborts Apply's waits and WatchFile.
	ctx    context.Context
	cancel context.CancelFunc

	applyMu sync.Mutex // one reconcile at a time (Apply, Close)
	// disposing tracks dispose goroutines that outlived ShutdownTimeout.
	disposing sync.WaitGroup

	mu       sync.Mutex
	source   string
	planKey  string             // of the plan last applied (see planKey)
	units    []*unit            // in plan order, disabled entries included
	reserved map[claimKey]*unit // who holds each claim
	refused  map[string]Refusal // by entry id: configs a reload did not put in force
	// fileRefused is why the last reload could not read or parse the
	// file, nil when it could (FileRefusal).
	fileRefused *Refusal
	version     uint64
	closed      bool
	closeErr    error
}

// unit is one entry of the current plan and its instance.
type unit struct {
	pe   PlanEntry
	fp   string // fingerprint of kind and config; "" when disabled
	kind Kind

	inst     Instance           // nil when disabled, pending or failed
	stop     context.CancelFunc // ends the instance's lifetime
	src      *tool.Source       // the instance's registration (Env.Tools)
	deadline time.Time          // when readiness stops waiting; zero: none
	failure  *Status            // why the instance is gone, when it failed

	// pred is the running unit this one replaces, until it has started
	// (then it takes pred's claims and pred is stopped) or given up (then
	// pred keeps running). Only Apply's goroutine touches it.
	pred *unit
}

// New returns a Host that runs nothing yet; Apply gives it a plan.
func New(opts Options) (*Host, error) {
	if opts.Catalog == nil || opts.Registry == nil {
		return nil, errors.New("host.New: Options.Catalog and Options.Registry are required")
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = DefaultShutdownTimeout
	}
	if opts.Debounce <= 0 {
		opts.Debounce = DefaultDebounce
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Host{
		opts:     opts,
		log:      log,
		ctx:      ctx,
		cancel:   cancel,
		reserved: map[claimKey]*unit{},
	}, nil
}

// Version counts the plans applied so far (successfully or not); it starts
// at 0. Watchers compare it to notice a reload.
func (h *Host) Version() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.version
}

// Source returns the Source of the plan last applied.
func (h *Host) Source() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.source
}

// Status returns a snapshot of every entry of the current plan, in plan
// order, disabled entries included. It never waits for an Apply.
func (h *Host) Status() []Status {
	type snap struct {
		pe       PlanEntry
		inst     Instance
		failure  *Status
		deadline time.Time
		refused  *Refusal
	}
	h.mu.Lock()
	snaps := make([]snap, len(h.units))
	for i, u := range h.units {
		snaps[i] = snap{pe: u.pe, inst: u.inst, failure: u.failure, deadline: u.deadline}
		if ref, ok := h.refused[u.pe.Entry.ID]; ok {
			snaps[i].refused = &ref
		}
	}
	h.mu.Unlock()

	now := time.Now()
	out := make([]Status, len(snaps))
	for i, s := range snaps {
		var st Status
		switch {
		case s.pe.Entry.Disabled:
			st = Status{State: StateDisabled}
		case s.failure != nil:
			st = *s.failure
		case s.inst == nil:
			st = Status{State: StateStarting}
		default:
			st = s.inst.Status() // called without the lock: it is plugin code
			if st.State == StateStarting && !s.deadline.IsZero() && now.After(s.deadline) {
				st.State = StateTimedOut
				if st.Err == "" {
					st.Err = fmt.Sprintf("no answer within the startup timeout (%dms)", s.pe.Spec.StartupTimeout.Milliseconds())
				}
			}
		}
		st.ID, st.Plugin, st.Refused = s.pe.Entry.ID, s.pe.Entry.Name, s.refused
		if st.Name == "" {
			st.Name = s.pe.Spec.Name
		}
		out[i] = st
	}
	return out
}

// fingerprint identifies an entry's kind and decoded config, so that an
// entry whose config did not change is left alone by a reload. It is a
// hash, so it never shows an expanded secret. A config that does not encode
// as JSON gets a fingerprint of its own every time (it is always restarted).
func fingerprint(kind string, cfg any) string {
	b, err := json.Marshal(cfg)
	if err != nil {
		return "unencodable " + rand.Text() // never equal to another
	}
	sum := sha256.Sum256(append([]byte(kind+"\x00"), b...))
	return hex.EncodeToString(sum[:])
}

// check validates a plan built in Go: ids present and unique, kinds known.
func (h *Host) check(plan *Plan) error {
	seen := map[string]bool{}
	var errs []error
	for i, pe := range plan.Entries {
		id := pe.Entry.ID
		switch {
		case id == "":
			errs = append(errs, fmt.Errorf("entry #%d has no id", i+1))
		case seen[id]:
			errs = append(errs, fmt.Errorf("entry %q appears twice", id))
		}
		seen[id] = true
		if _, ok := h.opts.Catalog.Kind(pe.Entry.Name); !ok && !pe.Entry.Disabled && pe.Err == nil {
			errs = append(errs, fmt.Errorf("entry %q: unknown plugin %q (known: %s)", id, pe.Entry.Name, strings.Join(h.opts.Catalog.Names(), ", ")))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s: invalid plan: %w", plan.Source, errors.Join(errs...))
	}
	return nil
}
