package host

import (
	"context"
	"fmt"
	"slices"
)

// restartMark, before a running unit's fingerprint, asks decide to start
// it again (Restart).
const restartMark = "restart:"

// Restart starts entry id again with the config it runs, making before
// breaking as a changed entry does: the new instance starts while the old
// one serves, takes its place once ready, and the old one is closed; if
// the new one does not start, the old one keeps running and the error is
// a *StartError. A failed entry is simply started again. The other entries
// are left alone. An id the plan does not run (unknown, disabled,
// invalid) is an error that says so.
func (h *Host) Restart(ctx context.Context, id string) error {
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	plan, u, err := h.runningPlan(id)
	if err != nil {
		return err
	}
	h.log.Info("restart requested", "entry", id)
	// The mark makes decide succeed the entry by itself, as a changed
	// one: the one path that replaces a running instance make-before-break.
	fp := u.fp
	u.fp = restartMark + fp
	// The config on disk is not read: its refusal, if any, stands.
	err = h.applyLocked(ctx, plan, func(string) bool { return false })
	h.mu.Lock()
	if slices.Contains(h.units, u) {
		u.fp = fp // the old instance kept running (the restart did not start)
	}
	h.mu.Unlock()
	return err
}

// ApplyEntry applies entry id of plan alone (a config re-read, say): the
// entry starts with its new config as Apply would start it, and every
// other entry keeps running as it is, whatever plan says of it. An id that
// is not in both plan and the running plan is an error that says so.
func (h *Host) ApplyEntry(ctx context.Context, plan *Plan, id string) error {
	if err := h.check(plan); err != nil {
		return err
	}
	i := slices.IndexFunc(plan.Entries, func(pe PlanEntry) bool { return pe.Entry.ID == id })
	if i < 0 {
		return fmt.Errorf("entry %q is not in %s any more: reload the whole config to remove it", id, plan.Source)
	}
	h.applyMu.Lock()
	defer h.applyMu.Unlock()
	run, _, err := h.runningPlan(id)
	if err != nil {
		return err
	}
	j := slices.IndexFunc(run.Entries, func(pe PlanEntry) bool { return pe.Entry.ID == id })
	run.Entries[j] = plan.Entries[i]
	h.log.Info("reload of one entry requested", "entry", id, "config", plan.Source)
	return h.applyLocked(ctx, run, func(e string) bool { return e == id })
}

// runningPlan is the plan the host runs now, and the unit of entry id,
// which must be running (an instance, or a failed start of a valid
// config). The caller holds applyMu.
func (h *Host) runningPlan(id string) (*Plan, *unit, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, nil, ErrClosed
	}
	plan := &Plan{Source: h.source}
	var found *unit
	for _, u := range h.units {
		plan.Entries = append(plan.Entries, u.pe)
		if u.pe.Entry.ID == id {
			found = u
		}
	}
	switch {
	case found == nil:
		return nil, nil, fmt.Errorf("no entry has id %q: the servers page lists the entries", id)
	case found.pe.Entry.Disabled:
		return nil, nil, fmt.Errorf("entry %q is disabled: enable it in the config to start it", id)
	case found.pe.Err != nil:
		return nil, nil, fmt.Errorf("entry %q has an invalid config (%v): fix it and reload", id, found.pe.Err)
	}
	return plan, found, nil
}
