package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// StartError is an entry whose new instance did not start: its kind refused
// it, a claim was taken, the instance gave up on its first attempt
// (Instance.StartErr) or, replacing a running instance, did not become ready
// in time; or the host refused to start it (a claim it needs stays with
// another entry).
type StartError struct {
	// ID is the entry's id.
	ID string
	// Err is why it did not start.
	Err error
	// Kept is the entry whose previous instance keeps running in place of
	// the new config, untouched: ID itself for a changed entry, the removed
	// entry's id for a renamed one (an added entry that was to take over a
	// removed entry's claims). It is "" when nothing ran before (an added or
	// enabled entry, or one restarted after a failure).
	Kept string
}

// Error says which entry did not start, why, and what runs instead.
func (e *StartError) Error() string {
	switch e.Kept {
	case "":
		return fmt.Sprintf("entry %q: failed to start: %v", e.ID, e.Err)
	case e.ID:
		return fmt.Sprintf("entry %q: the new config did not start, the previous config keeps running: %v", e.ID, e.Err)
	default:
		return fmt.Sprintf("entry %q: the new config did not start, entry %q keeps running its previous config: %v", e.ID, e.Kept, e.Err)
	}
}

// Unwrap returns the cause.
func (e *StartError) Unwrap() error { return e.Err }

// record is e as a log record: its message and attributes (the entry, the
// cause, and the entry kept running in its place when it is another).
func (e *StartError) record() (msg string, attrs []any) {
	attrs = []any{"entry", e.ID, "err", e.Err}
	switch e.Kept {
	case "":
		return "failed to start", attrs
	case e.ID:
		return "the new config did not start, the previous config keeps running", attrs
	default:
		return "the new config did not start, the entry it was to replace keeps running its previous config", append(attrs, "kept", e.Kept)
	}
}

// Apply makes the host run plan, entry by entry, making before breaking:
//
//   - entries are matched by id; an entry whose kind and decoded config are
//     unchanged keeps its instance untouched (its tools never blink);
//   - removed and newly disabled entries are stopped first, all in
//     parallel, each bounded by ShutdownTimeout; so is an entry whose
//     instance failed for good (a reload is how a user retries it, changed
//     or not: it has no working tools to keep, and its status then shows
//     the new attempt's outcome);
//   - a changed entry's new instance starts while the old one keeps serving,
//     publishing through the old instance's Source's Successor. Once it has
//     started (first attempt settled, Status ready) its tools have replaced
//     the old ones in one atomic swap; the entry's claims move to it, the
//     old instance's calls in flight get up to ShutdownTimeout to finish
//     (if it is a Drainer), and the old instance is closed. An added entry
//     that takes the claims of a removed one (an id renamed, its serverName
//     kept) takes over from it the same way;
//   - a new config that does not start (Start fails, its first attempt
//     fails, its startup timeout passes) is closed (with the others of its
//     wave that did not start, in parallel), and the old instance,
//     which never stopped, keeps running: a *StartError whose Kept names it;
//     except one that has published tools by then (not failed for good):
//     they have replaced the old ones, so it is kept and takes over;
//   - added and re-enabled entries start; Apply waits until each first
//     attempt has settled or its startup timeout has passed (a strict
//     instance, Spec.Strict, is waited for until it settles, at most
//     ShutdownTimeout more); one that fails for good is a *StartError and
//     its status says why; one that is slow keeps trying in the background;
//   - an invalid entry (PlanEntry.Err, see Catalog.ParseIsolated) does not
//     start: its working instance, if it has one, keeps running its
//     previous config, else its status is failed with the entry's
//     problems; either way it is a *StartError (Kept says which);
//   - two running entries never hold the same claim: a new instance that
//     needs a claim which another entry gives up in the same plan starts
//     only once that entry's replacement has taken over and its old
//     instance has closed (if the replacement fails, it is refused, since
//     the old instance keeps the claim); entries that would trade claims in
//     a circle (two serverNames swapped) are refused, each keeping its
//     previous config, and the error says to do it in two reloads.
//
// All starts, and all successions, run in parallel, except those that wait
// for a claim as above. A plan that is not valid (see Catalog.Parse; a
// Go-built plan is checked for ids and kinds) changes nothing. Failures are
// logged and returned, joined. If ctx ends, Apply stops waiting and returns
// ctx's error: replacements that have not started yet are abandoned (the
// old instances keep serving); added instances keep starting.
func (h *Host) Apply(ctx context.Context, plan *Plan) error {
	if err := h.check(plan); err != nil {
		return err
	}
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	return h.applyLocked(ctx, plan, func(string) bool { return true })
}

// applyLocked is Apply once plan is checked, with applyMu held. fromDisk
// says which entries of plan hold the config on disk, whose refusals
// Status then reports (the others run as they were).
func (h *Host) applyLocked(ctx context.Context, plan *Plan, fromDisk func(id string) bool) error {
	h.mu.Lock()
	closed, current := h.closed, h.units
	h.mu.Unlock()
	if closed {
		return ErrClosed
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(h.ctx, cancel)()

	run, invalid := keepInvalid(plan, current)
	r := h.prepare(ctx, run, current)
	r.stopFirst()
	r.install(plan, run)
	r.refuse()
	for _, err := range invalid {
		r.report(err)
	}
	for _, wave := range r.waves {
		r.run(wave)
	}
	h.noteRefusals(r.refusals, fromDisk)
	return r.finish(plan, current)
}

// rollout is one Apply in progress: the decision and the units it acts on.
type rollout struct {
	h      *Host
	ctx    context.Context
	source string
	d      decision

	old      map[string]*unit // the running plan's units, by id
	units    map[string]*unit // the new plan's units that start, by id
	next     []*unit          // the new plan's units in plan order
	waves    [][]action       // starts and successions, by wave, in plan order
	promoted map[string]bool  // successions that took over
	kept     map[string]bool  // entries left as they were: a change not made
	// closing has the outcome of each instance abandoned in the wave
	// running (see abandon).
	closing []chan error
	errs    []error
	// refusals are the entries left running their previous config, with
	// why (StartError.Kept).
	refusals map[string]string
}

// prepare decides what plan changes and builds the units it will run.
func (h *Host) prepare(ctx context.Context, plan *Plan, current []*unit) *rollout {
	r := &rollout{h: h, ctx: ctx, source: plan.Source, old: map[string]*unit{}, units: map[string]*unit{}, promoted: map[string]bool{}, kept: map[string]bool{}, refusals: map[string]string{}}
	known := make([]oldEntry, len(current))
	for i, u := range current {
		r.old[u.pe.Entry.ID] = u
		known[i] = h.describe(u)
	}
	r.d = decide(known, plan.Entries)
	acts := map[string]action{}
	for _, a := range slices.Concat(r.d.Start, r.d.Succeed, r.d.Refuse) {
		acts[a.ID] = a
	}
	for _, pe := range plan.Entries {
		a, acting := acts[pe.Entry.ID]
		r.next = append(r.next, r.slot(pe, a, acting))
		if acting && a.Reason == "" {
			for len(r.waves) <= a.Wave {
				r.waves = append(r.waves, nil)
			}
			r.waves[a.Wave] = append(r.waves[a.Wave], a)
		}
	}
	return r
}

// slot returns the unit that stands for pe in the new plan: the running
// one for a kept entry (or a refused change), else a new one.
func (r *rollout) slot(pe PlanEntry, a action, acting bool) *unit {
	id := pe.Entry.ID
	if pe.Err != nil {
		return &unit{pe: pe, failure: &Status{State: StateFailed, Err: pe.Err.Error(), Name: pe.Spec.Name}}
	}
	if !acting && !pe.Entry.Disabled { // decide keeps only a running, unchanged entry
		o := r.old[id]
		r.h.mu.Lock()
		o.pe.Entry = pe.Entry // same config, maybe moved in the file
		r.h.mu.Unlock()
		return o
	}
	nu := &unit{pe: pe}
	if !pe.Entry.Disabled {
		nu.kind, _ = r.h.opts.Catalog.Kind(pe.Entry.Name)
		nu.fp = fingerprint(pe.Entry.Name, pe.Spec.Config)
	}
	if !acting {
		return nu
	}
	r.units[id] = nu
	nu.pred = r.old[a.Pred] // nil without one
	if a.Reason != "" && a.Pred == id {
		return nu.pred // refused: the previous config stays in its place
	}
	return nu
}

// stopFirst stops what goes away without a replacement (removed, disabled,
// and failed entries about to restart), in parallel, and logs why.
func (r *rollout) stopFirst() {
	var stopping []*unit
	for _, a := range r.d.Stop {
		switch a.Why {
		case "removed":
			r.h.log.Info("removed, stopping", "entry", a.ID)
		case "disabled":
			r.h.log.Info("disabled, stopping", "entry", a.ID)
		case "invalid":
			r.h.log.Info("config invalid, stopping its failed instance", "entry", a.ID)
		}
		if o := r.old[a.ID]; o != nil && !o.pe.Entry.Disabled {
			stopping = append(stopping, o)
		}
	}
	for _, a := range r.d.Succeed {
		if a.Pred != a.ID {
			r.h.log.Info("removed, serving until its successor takes over", "entry", a.Pred, "successor", a.ID)
		}
	}
	if err := r.h.dispose(stopping); err != nil {
		r.logError(err)
		r.errs = append(r.errs, err)
	}
}

// install makes the new plan the host's: run is plan with the running
// instances kept in place of invalid entries (keepInvalid).
func (r *rollout) install(plan, run *Plan) {
	r.h.mu.Lock()
	r.h.units = r.next
	r.h.source = run.Source
	r.h.planKey = planKey(plan)
	r.h.mu.Unlock()
}

// keepInvalid returns the plan to run in place of plan: an invalid entry
// (PlanEntry.Err) whose running instance works is replaced by the running
// entry, so that it keeps serving (make before break); the other invalid
// entries stay, to be shown failed. It returns the error of every invalid
// entry, saying which ones keep their previous config.
func keepInvalid(plan *Plan, current []*unit) (*Plan, []*StartError) {
	if len(plan.Invalid()) == 0 {
		return plan, nil
	}
	running := map[string]*unit{}
	for _, u := range current {
		if !u.pe.Entry.Disabled && u.pe.Err == nil && u.failure == nil {
			running[u.pe.Entry.ID] = u
		}
	}
	run := &Plan{Source: plan.Source, Entries: slices.Clone(plan.Entries)}
	var errs []*StartError
	for i, pe := range run.Entries {
		if pe.Err == nil {
			continue
		}
		err := &StartError{ID: pe.Entry.ID, Err: pe.Err}
		if u := running[pe.Entry.ID]; u != nil {
			run.Entries[i] = u.pe
			err.Kept = pe.Entry.ID
		}
		errs = append(errs, err)
	}
	return run, errs
}

// refuse reports the changes decide refused: their old instances keep
// running.
func (r *rollout) refuse() {
	for _, a := range r.d.Refuse {
		r.keep(r.units[a.ID], r.old[a.Pred], errors.New(a.Reason))
	}
	r.abandoned()
}

// run starts the instances of one wave in parallel, waits for them, and
// hands over from the predecessors of those that took over.
func (r *rollout) run(wave []action) {
	var started []*unit
	for _, a := range wave {
		msg, attrs := a.starting()
		r.h.log.Info(msg, attrs...)
		u := r.units[a.ID]
		err := r.blocked(a)
		if err == nil {
			err = r.h.start(u, r.source)
		}
		if err != nil {
			r.failed(u, err)
			continue
		}
		started = append(started, u)
	}
	var retiring []*unit
	for _, u := range started {
		settled := r.h.settle(r.ctx, u)
		if u.pred == nil {
			r.checkStart(u, settled)
			continue
		}
		if err := r.h.verdict(r.ctx, u, settled); err != nil {
			r.failed(u, err)
			continue
		}
		retiring = append(retiring, r.promote(u))
	}
	if err := r.h.retire(r.ctx, retiring); err != nil {
		r.logError(err)
		r.errs = append(r.errs, err)
	}
	r.abandoned()
}

// abandon stops u, which did not start, in the background: one slow Close
// must hold up neither the verdicts still to come nor the other instances
// abandoned, so a wave that abandons many waits one ShutdownTimeout for
// them all (abandoned), not one each.
func (r *rollout) abandon(u *unit) {
	done := make(chan error, 1)
	go func() { done <- r.h.dispose([]*unit{u}) }()
	r.closing = append(r.closing, done)
}

// abandoned waits for the instances abandon stopped, each bounded by
// ShutdownTimeout, and logs what did not close cleanly.
func (r *rollout) abandoned() {
	for _, done := range r.closing {
		if err := <-done; err != nil {
			r.logError(err)
		}
	}
	r.closing = nil
}

// blocked says why a cannot start now: a claim it waits for stays with an
// entry whose replacement did not take over, or the reload was interrupted
// before a's wave.
func (r *rollout) blocked(a action) error {
	if err := r.ctx.Err(); err != nil && a.Wave > 0 {
		return fmt.Errorf("not started, the reload was interrupted: %w", err)
	}
	for _, w := range a.After {
		if r.promoted[w.For] {
			continue
		}
		if w.For == w.Holder {
			return fmt.Errorf("%s %q is still held by entry %q, whose new config did not start, so its previous config keeps running", w.Claim.Key, w.Claim.Value, w.Holder)
		}
		return fmt.Errorf("%s %q is still held by entry %q, which keeps running because entry %q did not start in its place", w.Claim.Key, w.Claim.Value, w.Holder, w.For)
	}
	return nil
}

// checkStart handles an added (or enabled, or restarted) instance once its
// first attempt settled or readiness stopped waiting: one that failed for
// good keeps a failed status and is closed (abandon); others stay, ready
// or trying.
func (r *rollout) checkStart(u *unit, settled bool) {
	if !settled {
		return
	}
	err := u.inst.StartErr()
	if err == nil {
		return
	}
	st := u.inst.Status()
	st.State, st.Err = StateFailed, err.Error()
	r.h.mu.Lock()
	u.failure = &st
	r.h.mu.Unlock()
	r.abandon(u)
	r.report(&StartError{ID: u.pe.Entry.ID, Err: err})
}

// failed handles a unit that did not start: with a predecessor, the
// predecessor keeps running; else the unit keeps a failed status.
func (r *rollout) failed(u *unit, err error) {
	if u.pred != nil {
		r.keep(u, u.pred, err)
		return
	}
	r.h.mu.Lock()
	if u.failure == nil {
		u.failure = &Status{State: StateFailed, Err: err.Error(), Name: u.pe.Spec.Name}
	}
	r.h.mu.Unlock()
	r.report(&StartError{ID: u.pe.Entry.ID, Err: err})
}

// keep abandons u, which was to replace pred: its Source is closed first,
// so that it can no longer take pred's tools over, then it is stopped
// (abandon). pred, untouched, stays in u's place (the same entry) or at
// the end of the plan (a removed entry that a renamed one was to replace).
func (r *rollout) keep(u, pred *unit, err error) {
	r.h.mu.Lock()
	u.pred = nil
	src := u.src
	u.failure = &Status{State: StateFailed, Err: err.Error(), Name: u.pe.Spec.Name}
	r.h.mu.Unlock()
	if src != nil {
		src.Close()
	}
	r.abandon(u)
	r.h.mu.Lock()
	if pred.pe.Entry.ID == u.pe.Entry.ID {
		for i, x := range r.h.units {
			if x == u {
				r.h.units[i] = pred
			}
		}
	} else {
		r.h.units = append(r.h.units, pred)
	}
	// What runs is not the plan installed: a reload of the same file
	// tries it again, not "no entry changed".
	r.h.planKey = ""
	r.h.mu.Unlock()
	r.kept[u.pe.Entry.ID], r.kept[pred.pe.Entry.ID] = true, true
	r.report(&StartError{ID: u.pe.Entry.ID, Err: err, Kept: pred.pe.Entry.ID})
}

// promote makes u, which has taken over pred's tools, the holder of its
// claims, and returns pred to be stopped.
func (r *rollout) promote(u *unit) *unit {
	h := r.h
	h.mu.Lock()
	pred := u.pred
	u.pred = nil
	for _, cl := range u.pe.Spec.Claims {
		h.reserved[claimKey{u.pe.Entry.Name, cl}] = u
	}
	h.mu.Unlock()
	r.promoted[u.pe.Entry.ID] = true
	if id := pred.pe.Entry.ID; id == u.pe.Entry.ID {
		h.log.Info("the new config is ready and serves; stopping the previous one", "entry", id)
	} else {
		h.log.Info("ready and serving; stopping the entry it took over from", "entry", u.pe.Entry.ID, "from", id)
	}
	return pred
}

// report logs a start error and adds it to Apply's result; one that
// kept a previous config running is a refusal Status reports.
func (r *rollout) report(err *StartError) {
	msg, attrs := err.record()
	r.h.log.Error(msg, attrs...)
	r.errs = append(r.errs, err)
	if err.Kept != "" {
		r.refusals[err.Kept] = err.Error()
	}
}

// noteRefusals makes refusals (entry id to why) the refusals of the
// entries fromDisk says an apply took from the config on disk; the
// others' stay as they were. A refusal for the same reason as before
// keeps its Since: the config has been refused since then.
func (h *Host) noteRefusals(refusals map[string]string, fromDisk func(id string) bool) {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	next := map[string]Refusal{}
	for id, ref := range h.refused {
		if !fromDisk(id) {
			next[id] = ref
		}
	}
	for id, why := range refusals {
		if !fromDisk(id) {
			continue
		}
		ref := Refusal{Err: why, Since: now}
		if old, ok := h.refused[id]; ok && old.Err == why {
			ref.Since = old.Since
		}
		next[id] = ref
	}
	h.refused = next
}

// logError logs the errors of dispose, one record each.
func (r *rollout) logError(err error) {
	for _, e := range split(err) {
		attrs := []any{"err", e}
		if ce, ok := errors.AsType[*closeError](e); ok {
			attrs = []any{"entry", ce.id, "err", ce.err}
		}
		r.h.log.Error("closing failed", attrs...)
	}
}

// split returns the errors joined in err (errors.Join, confpos.Errors), or
// err alone.
func split(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// closeError is an instance that did not close cleanly.
type closeError struct {
	id  string // the entry
	err error
}

func (e *closeError) Error() string { return fmt.Sprintf("entry %q: closing: %v", e.id, e.err) }
func (e *closeError) Unwrap() error { return e.err }

// finish counts the plan as applied, logs what changed and returns every
// failure, joined (with ctx's error if it ended).
func (r *rollout) finish(plan *Plan, current []*unit) error {
	r.h.mu.Lock()
	r.h.version++
	r.h.mu.Unlock()
	if changes := r.changes(plan, current); len(changes) == 0 {
		r.h.log.Debug("no entry changed", "config", r.source)
	} else {
		r.h.log.Info("applied", append([]any{"config", r.source}, changes...)...)
	}
	if err := r.ctx.Err(); err != nil {
		return errors.Join(append(r.errs, err)...)
	}
	return errors.Join(r.errs...)
}

// changes says what changed, as log attributes: for each kind of change
// (added, changed, removed...), in order of first appearance, the ids of
// the entries it concerns, comma-separated, in plan order and then the
// removed entries. Changes not made (the old config kept) are left out;
// an entry tried that failed to start, with no old config to keep, is
// "failed", not what was tried.
func (r *rollout) changes(plan *Plan, current []*unit) []any {
	why := map[string]string{}
	for _, a := range slices.Concat(r.d.Stop, r.d.Start, r.d.Succeed, r.d.Refuse) {
		why[a.ID] = a.Why
	}
	var kinds []string
	ids := map[string][]string{}
	note := func(w, id string) {
		if ids[w] == nil {
			kinds = append(kinds, w)
		}
		ids[w] = append(ids[w], id)
	}
	for _, err := range r.errs {
		if se, ok := errors.AsType[*StartError](err); ok && se.Kept == "" && why[se.ID] != "" {
			why[se.ID] = "failed" // tried, but nothing runs it
		}
	}
	inPlan := map[string]bool{}
	for _, pe := range plan.Entries {
		inPlan[pe.Entry.ID] = true
		if w := why[pe.Entry.ID]; w != "" && !r.kept[pe.Entry.ID] {
			note(w, pe.Entry.ID)
		}
	}
	for _, u := range current {
		if id := u.pe.Entry.ID; !inPlan[id] && !r.kept[id] {
			note("removed", id)
		}
	}
	attrs := make([]any, 0, 2*len(kinds))
	for _, w := range kinds {
		attrs = append(attrs, w, strings.Join(ids[w], ","))
	}
	return attrs
}

// describe is what decide needs to know of a running plan's unit.
func (h *Host) describe(u *unit) oldEntry {
	e := oldEntry{ID: u.pe.Entry.ID, Kind: u.pe.Entry.Name, Disabled: u.pe.Entry.Disabled}
	if !e.Disabled {
		e.FP, e.Claims, e.Broken = u.fp, u.pe.Spec.Claims, h.broken(u)
	}
	return e
}

// verdict says whether u, started to replace a running instance, has
// started: its first attempt settled without a failure for good, and it is
// ready. A replacement whose tools are registered has taken the old ones'
// place already (its connection may have dropped since, or its first
// attempt not settled yet), so it is kept: closing it would take the
// tools away for good, as the old instance's Source is superseded.
func (h *Host) verdict(ctx context.Context, u *unit, settled bool) error {
	published := u.src.Len() > 0
	if !settled {
		if published {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("the reload was interrupted: %w", err)
		}
		if why := u.inst.Status().Err; why != "" {
			return errors.New(why) // the instance's own word: what it was waiting for
		}
		return fmt.Errorf("no answer within the startup timeout (%dms)", u.pe.Spec.StartupTimeout.Milliseconds())
	}
	if err := u.inst.StartErr(); err != nil {
		return err
	}
	st := u.inst.Status()
	switch {
	case st.State == StateReady || published:
		return nil
	case st.Err != "":
		return errors.New(st.Err)
	default:
		return fmt.Errorf("not ready after its first attempt (%s)", st.State)
	}
}

// retire stops the predecessors whose replacements took over. Their tools
// are gone already, so no new call reaches them: a Drainer gets up to
// ShutdownTimeout (less if ctx ends) to finish its calls in flight, then
// all are disposed of in parallel.
func (h *Host) retire(ctx context.Context, units []*unit) error {
	if len(units) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, h.opts.ShutdownTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, u := range units {
		h.mu.Lock()
		d, ok := u.inst.(Drainer)
		h.mu.Unlock()
		if !ok {
			continue
		}
		wg.Go(func() {
			if err := d.Drain(ctx); errors.Is(err, context.DeadlineExceeded) {
				h.log.Warn("the previous instance still has calls in flight; closing it", "entry", u.pe.Entry.ID, "timeout", h.opts.ShutdownTimeout)
			}
		})
	}
	wg.Wait()
	return h.dispose(units)
}

// broken reports whether u's instance is gone or will never work again
// without a restart: failed to start, gave up, or closed.
func (h *Host) broken(u *unit) bool {
	h.mu.Lock()
	inst := u.inst
	h.mu.Unlock()
	if inst == nil {
		return true
	}
	st := inst.Status()
	return st.State == StateFailed || st.State == StateClosed
}

// anyBroken reports whether some enabled entry needs a restart.
func (h *Host) anyBroken() bool {
	h.mu.Lock()
	units := h.units
	h.mu.Unlock()
	for _, u := range units {
		if !u.pe.Entry.Disabled && h.broken(u) {
			return true
		}
	}
	return false
}

// start reserves u's claims (sharing its predecessor's) and starts its
// instance with a Source of its own, or its predecessor's Successor. On
// failure u keeps a failed status and nothing is left running.
func (h *Host) start(u *unit, source string) error {
	fail := func(err error) error {
		h.mu.Lock()
		u.failure = &Status{State: StateFailed, Err: err.Error(), Name: u.pe.Spec.Name}
		h.mu.Unlock()
		return err
	}
	if err := h.reserve(u, source); err != nil {
		return fail(err)
	}
	src := h.opts.Registry.NewSource()
	if u.pred != nil && u.pred.src != nil {
		src = u.pred.src.Successor()
	}
	lifetime, stop := context.WithCancel(context.Background())
	env := Env{
		ID:       u.pe.Entry.ID,
		Tools:    src,
		Registry: h.opts.Registry,
		Logger:   h.log.With("entry", u.pe.Entry.ID),
		Source:   source,
	}
	h.mu.Lock()
	u.src = src
	h.mu.Unlock()
	inst, err := u.kind.Start(lifetime, u.pe.Spec, env)
	if err != nil {
		stop()
		src.Close()
		h.release(u)
		return fail(fmt.Errorf("starting: %w", err))
	}
	var deadline time.Time
	if d := u.pe.Spec.StartupTimeout; d > 0 {
		deadline = time.Now().Add(d)
	}
	h.mu.Lock()
	u.inst, u.stop, u.deadline = inst, stop, deadline
	h.mu.Unlock()
	return nil
}

// settle waits until u's first attempt settled, its startup timeout passed
// (plus ShutdownTimeout for a strict instance) or ctx ended, and reports
// whether it settled. An instance settled already is never reported
// otherwise, whatever ctx says: it may have put its config in force as it
// started (the gateway entry), and abandoning it would close that config.
func (h *Host) settle(ctx context.Context, u *unit) bool {
	select {
	case <-u.inst.Ready():
		return true
	default:
	}
	var expired <-chan time.Time
	if !u.deadline.IsZero() {
		limit := u.deadline
		if u.pe.Spec.Strict {
			limit = limit.Add(h.opts.ShutdownTimeout)
		}
		t := time.NewTimer(time.Until(limit))
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-u.inst.Ready():
		return true
	case <-expired:
		return false
	case <-ctx.Done():
		return false
	}
}

// reserve claims u's names within the host, with upstream's conflict
// message (UPSTREAM §3.3) adapted to this project's file. A claim held by
// u's predecessor is shared: it stays the predecessor's until u takes over
// (promote).
func (h *Host) reserve(u *unit, source string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	kind := u.pe.Entry.Name
	for _, cl := range u.pe.Spec.Claims {
		if owner, taken := h.reserved[claimKey{kind, cl}]; taken && owner != u && (u.pred == nil || owner != u.pred) {
			return fmt.Errorf("%s: %s %q is already in use by another %s instance — pick a unique %s in %s",
				kind, cl.Key, cl.Value, kind, cl.Key, source)
		}
	}
	for _, cl := range u.pe.Spec.Claims {
		key := claimKey{kind, cl}
		if owner, taken := h.reserved[key]; !taken || owner != u.pred {
			h.reserved[key] = u
		}
	}
	return nil
}

// release frees u's claims (those it still holds).
func (h *Host) release(u *unit) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, cl := range u.pe.Spec.Claims {
		key := claimKey{u.pe.Entry.Name, cl}
		if h.reserved[key] == u {
			delete(h.reserved, key)
		}
	}
}

// dispose stops the instances of units in parallel: it cancels each one's
// lifetime, closes it, closes its Source and releases its claims. It waits
// at most ShutdownTimeout; an instance still closing then is reported and
// finishes in the background. It returns every error, joined.
func (h *Host) dispose(units []*unit) error {
	type closing struct {
		u    *unit
		done chan error
	}
	var pending []closing
	for _, u := range units {
		h.mu.Lock()
		inst, stop, src := u.inst, u.stop, u.src
		u.inst, u.stop = nil, nil
		if u.failure == nil {
			u.failure = &Status{State: StateClosed, Name: u.pe.Spec.Name}
		}
		h.mu.Unlock()
		if inst == nil {
			continue
		}
		c := closing{u, make(chan error, 1)}
		h.disposing.Add(1)
		go func() {
			defer h.disposing.Done()
			stop()
			err := inst.Close()
			src.Close()
			h.release(u)
			c.done <- err
		}()
		pending = append(pending, c)
	}
	if len(pending) == 0 {
		return nil
	}
	timer := time.NewTimer(h.opts.ShutdownTimeout)
	defer timer.Stop()
	var errs []error
	expired := false
	for _, c := range pending {
		var err error
		if expired {
			select {
			case err = <-c.done:
			default:
				err = fmt.Errorf("did not close within %s; it goes on closing in the background", h.opts.ShutdownTimeout)
			}
		} else {
			select {
			case err = <-c.done:
			case <-timer.C:
				expired = true
				err = fmt.Errorf("did not close within %s; it goes on closing in the background", h.opts.ShutdownTimeout)
			}
		}
		if err != nil {
			errs = append(errs, &closeError{id: c.u.pe.Entry.ID, err: err})
		}
	}
	return errors.Join(errs...)
}

// Close disposes of every instance in parallel, each bounded by
// ShutdownTimeout, and returns every error, joined. It interrupts a running
// Apply or WatchFile first. It is idempotent: later calls return the first
// result.
func (h *Host) Close() error {
	h.cancel()
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	h.mu.Lock()
	if h.closed {
		defer h.mu.Unlock()
		return h.closeErr
	}
	h.closed = true
	units := h.units
	h.mu.Unlock()
	err := h.dispose(units)
	h.mu.Lock()
	h.closeErr = err
	h.mu.Unlock()
	return err
}

// wait blocks until every dispose goroutine has finished, for tests: those
// that outlived ShutdownTimeout end in the background.
func (h *Host) wait() { h.disposing.Wait() }
