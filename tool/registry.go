package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Registry is a concurrent table of tools. The zero value is an empty
// registry ready to use; NewRegistry exists for symmetry with other
// constructors. All methods are safe for concurrent use. A Registry must
// not be copied after first use.
type Registry struct {
	mu       sync.RWMutex
	tools    map[string]entry           // by public name; guarded by mu
	servers  map[string]*Handle         // sources publishing resources or prompts, by Offer.Server; guarded by mu
	prompts  map[string]promptEntry     // by public name; guarded by mu
	skills   map[string]skillEntry      // by public name; guarded by mu
	subs     map[subKey]*subscription   // resource subscriptions; guarded by mu
	leaving  map[subKey]chan struct{}   // unsubscribes on their way, closed when answered; guarded by mu
	sorted   []Tool                     // cache for List, valid iff sortedOK; guarded by mu
	sortedOK bool                       // guarded by mu
	held     map[string]*Handle         // tools withheld by their sources (Offer.Withheld), by public name; guarded by mu
	watchers map[chan struct{}]struct{} // guarded by mu
	version  atomic.Uint64              // written under mu, read without it
}

// entry is one registered tool and the handle that owns it.
type entry struct {
	tool  Tool
	owner *Handle
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// Handle is the registration of a group of tools, returned by Register and
// Replace. Its methods are safe for concurrent use.
type Handle struct {
	r     *Registry
	names []string          // registration order; immutable
	offer *Offer            // the rest of the offer (Tools nil); nil when it has none; immutable
	held  map[string]string // Offer.Withheld; immutable
	src   *Source           // the source that published it; nil for Register and Replace
	done  bool              // unregistered; guarded by r.mu
}

// Unregister removes the handle's tools and notifies watchers once. It is
// idempotent, a no-op on a nil handle, and a no-op after the handle was
// replaced. Calls already running finish normally.
func (h *Handle) Unregister() {
	if h == nil || h.r == nil {
		return
	}
	r := h.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dropLocked(h) {
		r.changedLocked()
	}
}

// Names returns the names of the handle's tools in registration order, as a
// fresh slice. It still answers after Unregister.
func (h *Handle) Names() []string {
	if h == nil {
		return nil
	}
	return slices.Clone(h.names)
}

// Register registers all tools or none, and notifies watchers once if any
// were added.
//
// A name already registered, or given twice in tools, fails with a
// *ConflictError (wrapping ErrConflict) whose text is exactly
// `tool "<name>" is already registered`; the tool holding the name is left
// untouched. An empty name, a nil Execute, or a schema that is not valid
// JSON is an error too (not ErrConflict). Zero tools is allowed and returns
// an empty handle.
func (r *Registry) Register(tools ...Tool) (*Handle, error) {
	return r.Replace(nil, tools...)
}

// Replace atomically unregisters old and registers tools, under one lock and
// with one change notification, so a reader never sees a state in between
// (neither both sets nor neither). old may be nil or already unregistered;
// names owned by old do not conflict with tools. On error nothing changes
// (old stays registered) and the error is as for Register; a handle from
// another registry is an error too.
func (r *Registry) Replace(old *Handle, tools ...Tool) (*Handle, error) {
	return r.replaceOffer(old, Offer{Tools: tools}, nil)
}

// replaceOffer is Replace for a whole Offer: tools, and a server's
// resources, templates and prompts, swapped together.
func (r *Registry) replaceOffer(old *Handle, o Offer, src *Source) (*Handle, error) {
	// Checks that need no lock run first, to keep the critical section short.
	if err := checkDefinitions(o.Tools); err != nil {
		return nil, err
	}
	rest, err := checkOffer(o)
	if err != nil {
		return nil, err
	}
	if old != nil && old.r != r {
		return nil, errors.New("replace tools: the old handle belongs to another registry")
	}
	names := make([]string, len(o.Tools))
	for i, t := range o.Tools {
		names[i] = t.Name
	}
	h := &Handle{r: r, names: names, offer: rest, held: maps.Clone(o.Withheld), src: src}

	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.conflictLocked(old, o.Tools, rest); err != nil {
		return nil, err
	}
	changed := r.dropLocked(old)
	if len(o.Tools) > 0 {
		if r.tools == nil {
			r.tools = make(map[string]entry, len(o.Tools))
		}
		for _, t := range o.Tools {
			r.tools[t.Name] = entry{tool: t, owner: h}
		}
		changed = true
	}
	if r.addOfferLocked(h) {
		changed = true
	}
	r.holdLocked(h)
	if changed {
		r.changedLocked()
	}
	return h, nil
}

// conflictLocked reports a tool or prompt name, or a server, that a handle
// other than old holds already.
func (r *Registry) conflictLocked(old *Handle, tools []Tool, rest *Offer) error {
	for _, t := range tools {
		if e, taken := r.tools[t.Name]; taken && (old == nil || e.owner != old) {
			return &ConflictError{Name: t.Name}
		}
	}
	if rest == nil {
		return nil
	}
	if h, taken := r.servers[rest.Server]; taken && h != old {
		return &ConflictError{Name: rest.Server, Kind: "server"}
	}
	for _, p := range rest.Prompts {
		if e, taken := r.prompts[p.Name]; taken && e.owner != old {
			return &ConflictError{Name: p.Name, Kind: "prompt"}
		}
	}
	for _, s := range rest.Skills {
		if e, taken := r.skills[s.Name]; taken && e.owner != old {
			return &ConflictError{Name: s.Name, Kind: "skill"}
		}
	}
	return nil
}

// checkDefinitions reports the first malformed definition in tools, or a
// name given twice.
func checkDefinitions(tools []Tool) error {
	seen := make(map[string]struct{}, len(tools))
	for i, t := range tools {
		if t.Name == "" {
			return fmt.Errorf("tool at index %d: name is empty", i)
		}
		if t.Execute == nil {
			return fmt.Errorf("tool %q: Execute is nil", t.Name)
		}
		if err := checkJSON(t.InputSchema); err != nil {
			return fmt.Errorf("tool %q: InputSchema is not valid JSON: %w", t.Name, err)
		}
		if err := checkJSON(t.OutputSchema); err != nil {
			return fmt.Errorf("tool %q: OutputSchema is not valid JSON: %w", t.Name, err)
		}
		if err := checkJSON(t.Annotations); err != nil {
			return fmt.Errorf("tool %q: Annotations is not valid JSON: %w", t.Name, err)
		}
		if err := checkJSON(t.Meta); err != nil {
			return fmt.Errorf("tool %q: Meta is not valid JSON: %w", t.Name, err)
		}
		if _, dup := seen[t.Name]; dup {
			return &ConflictError{Name: t.Name}
		}
		seen[t.Name] = struct{}{}
	}
	return nil
}

// checkJSON reports why b is not valid JSON; empty b is fine (absent).
// json.Valid runs first because it does not allocate; the decoder is only
// asked for its reason on the failure path.
// CheckArguments says why args cannot be a call's arguments (they are
// not JSON: "invalid arguments: …", as Execute answers); nil when they
// can, empty included. A caller that asks a person about a call checks
// first, so that no one is asked about one that cannot run.
func CheckArguments(args json.RawMessage) error {
	if err := checkJSON(args); err != nil {
		return fmt.Errorf("invalid arguments: %w", err)
	}
	return nil
}

func checkJSON(b []byte) error {
	if len(b) == 0 || json.Valid(b) {
		return nil
	}
	var raw json.RawMessage
	return json.Unmarshal(b, &raw)
}

// dropLocked removes h's tools, if h is still registered, and reports
// whether the tool set changed. r.mu must be held for writing.
func (r *Registry) dropLocked(h *Handle) bool {
	if h == nil || h.done {
		return false
	}
	h.done = true
	// While h is not done every one of its names is in the map and owned by
	// h: only h's own Unregister or a Replace of h removes them.
	for _, name := range h.names {
		delete(r.tools, name)
	}
	for name := range h.held {
		if r.held[name] == h {
			delete(r.held, name)
		}
	}
	return r.dropOfferLocked(h) || len(h.names) > 0
}

// holdLocked records the tools h's source withholds. Nothing is listed
// differently, so watchers are not told.
func (r *Registry) holdLocked(h *Handle) {
	if len(h.held) > 0 && r.held == nil {
		r.held = make(map[string]*Handle, len(h.held))
	}
	for name := range h.held {
		r.held[name] = h
	}
}

// Withheld returns why a source withholds the tool named name (see
// Offer.Withheld), and whether one does.
func (r *Registry) Withheld(name string) (string, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if h := r.held[name]; h != nil {
		return h.held[name], true
	}
	return "", false
}

// notFound is Execute's answer for a name no tool has.
func (r *Registry) notFound(name string) (Result, error) {
	var err error = fmt.Errorf("%w %q", ErrNotFound, name)
	if why, ok := r.Withheld(name); ok {
		err = &WithheldError{Name: name, Why: why}
	}
	return failure(err.Error(), CodeUnknownTool), err
}

// changedLocked records a change of the tool set and tells the watchers.
// The sends never block (buffer 1), so doing them under the lock calls out
// to no one, and a watcher woken by the send reads the new state.
func (r *Registry) changedLocked() {
	r.version.Add(1)
	r.sorted, r.sortedOK = nil, false
	for ch := range r.watchers {
		select {
		case ch <- struct{}{}:
		default: // a value is pending already: bursts coalesce
		}
	}
}

// Get returns the tool registered under name.
func (r *Registry) Get(name string) (Tool, bool) {
	r.mu.RLock()
	e, ok := r.tools[name]
	r.mu.RUnlock()
	return e.tool, ok
}

// List returns all tools sorted by Name (byte order), so the model sees the
// same tool block whatever order they were registered in. The slice is
// fresh and the caller may keep or modify it; the sorted order is cached
// until the next change because List runs on every model request.
func (r *Registry) List() []Tool {
	r.mu.RLock()
	if r.sortedOK {
		out := slices.Clone(r.sorted)
		r.mu.RUnlock()
		return out
	}
	r.mu.RUnlock()

	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.sortedOK { // another List may have rebuilt it meanwhile
		sorted := make([]Tool, 0, len(r.tools))
		for _, e := range r.tools {
			sorted = append(sorted, e.tool)
		}
		slices.SortFunc(sorted, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
		r.sorted, r.sortedOK = sorted, true
	}
	return slices.Clone(r.sorted)
}

// Len returns the number of registered tools.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.tools)
}

// Execute runs the tool named name with args and reports the outcome as a
// Result. The error is non-nil only for an unknown name (it wraps
// ErrNotFound, for callers that branch); every other failure is a Result
// with IsError set and a nil error:
//
//   - unknown name: `Error: unknown tool "<name>"`, CodeUnknownTool; for a
//     tool its source withholds, `Error: tool "<name>" is withheld: <why>`
//     (a *WithheldError, also wrapping ErrNotFound), CodeUnknownTool;
//   - args nil or empty mean `{}`; args that are not valid JSON:
//     `Error: invalid arguments: <reason>`, CodeInvalidArguments. Valid JSON
//     that is not an object is passed through: the tool decides;
//   - ctx already done: `Error: tool call aborted before dispatch`,
//     CodeAbortedBeforeDispatch, and the body is not called;
//   - the body returns an error e: `Error: ` + e.Error(), no code, no value
//     (a *ToolError also hands its Wire to the Result); CodeTimeout when e
//     wraps context.DeadlineExceeded and ctx is not done;
//   - the body succeeds but ctx was cancelled meanwhile:
//     `Error: tool call aborted`, CodeAborted (the caller has gone, so a late
//     success must not look like one);
//   - the body returns a Value or Wire that is not valid JSON:
//     `Error: tool "<name>" returned invalid output: …`, CodeInvalidToolOutput;
//   - success: Content, Value and Wire exactly as the body returned them.
//
// Execute is the one way to call a tool: consumers never call a Tool's
// Execute themselves, so every consumer applies the same rules. Progress
// reaches the listener set with WithProgress. The registry lock is not held
// while the body runs, so a body may use the registry, and a tool
// unregistered during its run completes normally.
func (r *Registry) Execute(ctx context.Context, name string, args json.RawMessage) (Result, error) {
	r.mu.RLock()
	e, ok := r.tools[name]
	r.mu.RUnlock()
	if !ok {
		return r.notFound(name)
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	} else if err := CheckArguments(args); err != nil {
		return failure(err.Error(), CodeInvalidArguments), nil
	}
	if ctx.Err() != nil {
		return failure("tool call aborted before dispatch", CodeAbortedBeforeDispatch), nil
	}
	out, err := e.tool.Execute(ctx, args)
	if err != nil {
		res := failure(err.Error(), "")
		res.Cause = err
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			res.Error.Code = CodeTimeout
		}
		if te, ok := errors.AsType[*ToolError](err); ok && json.Valid(te.Wire) {
			res.Wire = te.Wire
		}
		return res, nil
	}
	if ctx.Err() != nil {
		return failure("tool call aborted", CodeAborted), nil
	}
	if err := checkOutput(out); err != nil {
		msg := fmt.Sprintf("tool %q returned invalid output: %v", name, err)
		return failure(msg, CodeInvalidToolOutput), nil
	}
	return Result{Content: out.Content, Value: out.Value, Wire: out.Wire}, nil
}

// checkOutput reports why a body's Output cannot be printed or forwarded.
func checkOutput(out Output) error {
	if err := checkJSON(out.Value); err != nil {
		return fmt.Errorf("value is not valid JSON: %w", err)
	}
	if err := checkJSON(out.Wire); err != nil {
		return fmt.Errorf("wire result is not valid JSON: %w", err)
	}
	return nil
}

// Watch returns a channel that receives a value after every change of the
// tool set, and a cancel func that stops delivery. The send never blocks and
// the buffer holds one value, so a burst of changes coalesces into one
// wake-up: a watcher should re-read the registry (List, Version) when woken,
// not count values. cancel is idempotent; it does not close the channel (as
// with signal.Stop) but discards a pending value, so nothing is received
// after it returns.
func (r *Registry) Watch() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	r.mu.Lock()
	if r.watchers == nil {
		r.watchers = make(map[chan struct{}]struct{})
	}
	r.watchers[ch] = struct{}{}
	r.mu.Unlock()
	cancel := func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		delete(r.watchers, ch)
		select {
		case <-ch:
		default:
		}
	}
	return ch, cancel
}

// Version returns a counter incremented on every change of the tool set,
// for callers that compare snapshots. A registry starts at 0.
func (r *Registry) Version() uint64 { return r.version.Load() }
