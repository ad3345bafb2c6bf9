package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// StartError is an entry whose instance failed to start: its kind refused
// it, a claim was taken, or the instance gave up on its first attempt
// (Instance.StartErr).
type StartError struct {
	// ID is the entry's id.
	ID string
	// Err is why it failed.
	Err error
	// Restored reports that the entry had a previous config, which was
	// restarted in its place (it may itself have failed: see Status).
	Restored bool
}

// Error says which entry failed, why, and whether the old config runs.
func (e *StartError) Error() string {
	if e.Restored {
		return fmt.Sprintf("entry %q: the new config failed to start, the previous config was restored: %v", e.ID, e.Err)
	}
	return fmt.Sprintf("entry %q: failed to start: %v", e.ID, e.Err)
}

// Unwrap returns the cause.
func (e *StartError) Unwrap() error { return e.Err }

// Apply makes the host run plan, entry by entry (DECISIONS §4):
//
//   - entries are matched by id; an entry whose kind and decoded config are
//     unchanged keeps its instance untouched (its tools never blink);
//   - removed, changed and newly disabled entries are disposed of first,
//     all in parallel, each bounded by ShutdownTimeout;
//   - then changed, added and re-enabled entries start, all in parallel,
//     and Apply waits until each first attempt has settled or its startup
//     timeout has passed (a strict instance, Spec.Strict, is waited for
//     until it settles, at most ShutdownTimeout more, so its failure is
//     known);
//   - an entry that fails to start is reported in the returned error
//     (errors.Join of *StartError); a changed one gets its previous config
//     restored and restarted.
//
// Disposing first is what lets an entry be renamed while keeping its
// serverName. A plan that is not valid (see Catalog.Parse; a Go-built plan
// is checked for ids and kinds) changes nothing. If ctx ends, Apply stops
// waiting and returns ctx's error; the instances it started keep starting.
func (h *Host) Apply(ctx context.Context, plan *Plan) error {
	if err := h.check(plan); err != nil {
		return err
	}
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	h.mu.Lock()
	closed := h.closed
	current := h.units
	h.mu.Unlock()
	old := make(map[string]*unit, len(current))
	for _, u := range current {
		old[u.pe.Entry.ID] = u
	}
	if closed {
		return ErrClosed
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(h.ctx, cancel)()

	var (
		next     []*unit
		stopping []*unit
		starting []*unit
		previous = map[*unit]*unit{} // a changed entry's new unit → its old one
		changes  []string
	)
	note := func(id, what string) { changes = append(changes, fmt.Sprintf("%s %q", what, id)) }
	var later []string // start lines, logged after the stops they follow
	for _, pe := range plan.Entries {
		id := pe.Entry.ID
		o := old[id]
		delete(old, id)
		nu := &unit{pe: pe}
		if !pe.Entry.Disabled {
			nu.kind, _ = h.opts.Catalog.Kind(pe.Entry.Name)
			nu.fp = fingerprint(pe.Entry.Name, pe.Spec.Config)
		}
		running := o != nil && !o.pe.Entry.Disabled
		switch {
		case pe.Entry.Disabled:
			if running {
				stopping = append(stopping, o)
				note(id, "disabled")
				h.log.Info(fmt.Sprintf("entry %q: disabled, stopping", id))
			}
			next = append(next, nu)
		case running && o.fp == nu.fp && !h.broken(o):
			h.mu.Lock()
			o.pe.Entry = pe.Entry // same config, maybe moved in the file
			h.mu.Unlock()
			next = append(next, o)
		case running && o.fp == nu.fp:
			// Same config, but its instance failed or gave up: a reload is
			// how a user retries it (the give-up message says so).
			stopping = append(stopping, o)
			starting = append(starting, nu)
			next = append(next, nu)
			note(id, "restarted")
			h.log.Info(fmt.Sprintf("entry %q: failed earlier, restarting", id))
		case running:
			stopping = append(stopping, o)
			starting = append(starting, nu)
			previous[nu] = o
			next = append(next, nu)
			note(id, "changed")
			h.log.Info(fmt.Sprintf("entry %q: config changed, restarting", id))
		default:
			starting = append(starting, nu)
			next = append(next, nu)
			if o != nil {
				note(id, "enabled")
				later = append(later, fmt.Sprintf("entry %q: enabled, starting", id))
			} else {
				note(id, "added")
				later = append(later, fmt.Sprintf("entry %q: added, starting", id))
			}
		}
	}
	for _, o := range current { // in file order, for stable logs
		if _, removed := old[o.pe.Entry.ID]; !removed {
			continue
		}
		if !o.pe.Entry.Disabled {
			stopping = append(stopping, o)
		}
		note(o.pe.Entry.ID, "removed")
		h.log.Info(fmt.Sprintf("entry %q: removed, stopping", o.pe.Entry.ID))
	}

	var errs []error
	if err := h.dispose(stopping); err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			h.log.Error(line)
		}
		errs = append(errs, err)
	}
	h.mu.Lock()
	h.units = next
	h.source = plan.Source
	h.planKey = planKey(plan)
	h.mu.Unlock()

	for _, line := range later {
		h.log.Info(line)
	}
	failed := h.startAll(ctx, plan.Source, starting)
	for _, u := range starting {
		err := failed[u]
		if err == nil {
			continue
		}
		prev := previous[u]
		if prev == nil {
			h.log.Error(fmt.Sprintf("entry %q: failed to start: %v", u.pe.Entry.ID, err))
			errs = append(errs, &StartError{ID: u.pe.Entry.ID, Err: err})
			continue
		}
		h.log.Error(fmt.Sprintf("entry %q: the new config failed to start: %v — restoring the previous config", u.pe.Entry.ID, err))
		errs = append(errs, &StartError{ID: u.pe.Entry.ID, Err: err, Restored: true})
		r := &unit{pe: prev.pe, fp: prev.fp, kind: prev.kind}
		h.mu.Lock()
		for i, x := range h.units {
			if x == u {
				h.units[i] = r
			}
		}
		h.mu.Unlock()
		if err := h.startAll(ctx, plan.Source, []*unit{r})[r]; err != nil {
			h.log.Error(fmt.Sprintf("entry %q: the previous config failed to start too: %v", r.pe.Entry.ID, err))
		} else {
			h.log.Info(fmt.Sprintf("entry %q: previous config restored", r.pe.Entry.ID))
		}
	}

	h.mu.Lock()
	h.version++
	h.mu.Unlock()
	if len(changes) == 0 {
		h.log.Debug(plan.Source + ": no entry changed")
	} else {
		h.log.Info(fmt.Sprintf("%s: applied (%s)", plan.Source, strings.Join(changes, ", ")))
	}
	if err := ctx.Err(); err != nil {
		return errors.Join(append(errs, err)...)
	}
	return errors.Join(errs...)
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
	st := inst.Status().State
	return st == StateFailed || st == StateClosed
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

// startAll starts units in parallel, waits for them to settle (bounded),
// and returns the units that failed to start, with why. A failed unit's
// instance is disposed of and its claims released; its status stays, as a
// failure.
func (h *Host) startAll(ctx context.Context, source string, units []*unit) map[*unit]error {
	failed := map[*unit]error{}
	var started []*unit
	for _, u := range units {
		if err := h.start(u, source); err != nil {
			failed[u] = err
			continue
		}
		started = append(started, u)
	}
	for _, u := range started {
		if !h.settle(ctx, u) {
			continue
		}
		if err := u.inst.StartErr(); err != nil {
			failed[u] = err
			st := u.inst.Status()
			st.State, st.Err = StateFailed, err.Error()
			if derr := h.dispose([]*unit{u}); derr != nil {
				h.log.Error(derr.Error())
			}
			h.mu.Lock()
			u.failure = &st
			h.mu.Unlock()
		}
	}
	return failed
}

// start reserves u's claims and starts its instance. On failure u keeps a
// failed status and nothing is left running.
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
	lifetime, stop := context.WithCancel(context.Background())
	env := Env{
		ID:       u.pe.Entry.ID,
		Registry: h.opts.Registry,
		Logger:   h.log.With("entry", u.pe.Entry.ID),
		Source:   source,
	}
	inst, err := u.kind.Start(lifetime, u.pe.Spec, env)
	if err != nil {
		stop()
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
// whether it settled.
func (h *Host) settle(ctx context.Context, u *unit) bool {
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
// message (UPSTREAM §3.3) adapted to this project's file.
func (h *Host) reserve(u *unit, source string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	kind := u.pe.Entry.Name
	for _, cl := range u.pe.Spec.Claims {
		if owner, taken := h.reserved[claimKey{kind, cl}]; taken && owner != u {
			return fmt.Errorf("%s: %s %q is already in use by another %s instance — pick a unique %s in %s",
				kind, cl.Key, cl.Value, kind, cl.Key, source)
		}
	}
	for _, cl := range u.pe.Spec.Claims {
		h.reserved[claimKey{kind, cl}] = u
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

// dispose closes the instances of units in parallel and releases their
// claims once each has closed. It waits at most ShutdownTimeout; an
// instance still closing then is reported and finishes in the background.
// It returns every error, joined.
func (h *Host) dispose(units []*unit) error {
	type closing struct {
		u    *unit
		done chan error
	}
	var pending []closing
	for _, u := range units {
		h.mu.Lock()
		inst, stop := u.inst, u.stop
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
			errs = append(errs, fmt.Errorf("entry %q: closing: %w", c.u.pe.Entry.ID, err))
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
