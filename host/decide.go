package host

import (
	"fmt"
	"slices"
)

// oldEntry is what decide knows of an entry of the running plan.
type oldEntry struct {
	ID, Kind string
	FP       string // fingerprint of kind and config; "" when disabled
	Disabled bool
	Broken   bool // its instance is gone or failed for good (see broken)
	Claims   []Claim
}

// action is one step of a reload, as decide plans it.
type action struct {
	// ID is the entry acted on (for a stop, the running plan's entry).
	ID string
	// Pred is the running entry whose instance a succession replaces:
	// ID itself for a changed entry; a removed entry whose claims an
	// added (or enabled, or restarted) entry takes over, like an id
	// renamed.
	Pred string
	// Why is what happens to the entry: added, enabled, changed,
	// restarted (after a failure) or restart (Host.Restart); for a stop, removed, disabled, changed or restarted (a
	// failed instance stopped before its entry starts again).
	Why string
	// Wave is the round a start or succession runs in: each round starts
	// once the previous one has handed over (see After).
	Wave int
	// After lists the claims a start or succession waits for: held by an
	// entry that gives them up in this plan once its own successor has
	// taken over.
	After []hold
	// Reason says why a succession is refused ("" when it is not).
	Reason string
}

// hold is a claim a new instance waits for: entry Holder's instance keeps
// it until the successor For has taken over and that instance has closed.
type hold struct {
	Claim       Claim
	Holder, For string
}

// starting is the log record of a start or succession: its message and
// attributes (the entry, and the entry it takes over from).
func (a action) starting() (msg string, attrs []any) {
	attrs = []any{"entry", a.ID}
	verb := a.Why
	switch a.Why {
	case "restarted":
		verb = "failed earlier, restarting"
	case "changed":
		verb = "config changed, restarting"
	}
	switch {
	case a.Pred == a.ID && a.Why == "restart":
		return "restart asked for, starting it again (the running instance serves until the new one is ready)", attrs
	case a.Pred == a.ID:
		return "config changed, starting it (the previous config serves until it is ready)", attrs
	case a.Pred != "":
		return verb + ", taking over from another entry (which serves until this one is ready)", append(attrs, "from", a.Pred)
	case a.Why == "added" || a.Why == "enabled":
		return verb + ", starting", attrs
	default:
		return verb, attrs
	}
}

// decision is what a reload does, entry by entry.
type decision struct {
	Keep    []string // entries whose instance is left alone
	Stop    []action // instances stopped first, in parallel
	Start   []action // new instances without a predecessor
	Succeed []action // new instances that replace a running one
	Refuse  []action // successions not made: Pred keeps running
}

// decide turns the running entries and a new plan's entries into the steps
// of a reload. It is a pure function of its arguments:
//
//   - an unchanged running entry is kept; a newly disabled one stopped;
//   - a changed running entry is succeeded (Pred: itself);
//   - a running entry whose instance is broken is stopped and started again
//     (restarted when unchanged, changed otherwise): it has nothing to keep;
//   - an entry enabled again starts;
//   - an entry that starts (added, enabled or restarted) and shares a
//     claim with a removed, working entry of its kind succeeds it instead
//     (an id renamed: Pred is the removed entry); other removed entries
//     are stopped;
//   - starts and successions that need a claim held by another succession's
//     predecessor wait for it (After, Wave); successions that wait for each
//     other in a circle are refused.
func decide(old []oldEntry, entries []PlanEntry) decision {
	var d decision
	byID := make(map[string]*oldEntry, len(old))
	for i := range old {
		byID[old[i].ID] = &old[i]
	}
	inPlan := make(map[string]bool, len(entries))
	for _, pe := range entries {
		inPlan[pe.Entry.ID] = true
	}
	var removed []*oldEntry
	for i := range old {
		if !inPlan[old[i].ID] {
			removed = append(removed, &old[i])
		}
	}
	taken := map[string]bool{} // removed entries that another one succeeds
	for _, pe := range entries {
		start := d.entry(byID[pe.Entry.ID], pe)
		if start == nil {
			continue
		}
		if p := predecessor(pe, removed, taken); p != "" {
			taken[p] = true
			start.Pred = p
			d.Succeed = append(d.Succeed, *start)
		} else {
			d.Start = append(d.Start, *start)
		}
	}
	for _, o := range removed {
		if !taken[o.ID] {
			d.Stop = append(d.Stop, action{ID: o.ID, Why: "removed"})
		}
	}
	d.schedule(old, entries)
	return d
}

// entry decides for pe, given its running entry o (nil if none). It
// returns pe's start, for decide to make or turn into a succession of a
// removed entry, or nil when pe does not start without a predecessor.
func (d *decision) entry(o *oldEntry, pe PlanEntry) *action {
	id := pe.Entry.ID
	running := o != nil && !o.Disabled
	switch {
	case pe.Entry.Disabled && running:
		d.Stop = append(d.Stop, action{ID: id, Why: "disabled"})
		return nil
	case pe.Err != nil && running: // a broken instance: a working one is kept (keepInvalid)
		d.Stop = append(d.Stop, action{ID: id, Why: "invalid"})
		return nil
	case pe.Entry.Disabled, pe.Err != nil:
		return nil
	}
	fp := fingerprint(pe.Entry.Name, pe.Spec.Config)
	asked := running && o.FP == restartMark+fp // Host.Restart
	switch {
	case running && o.Broken:
		why := "changed"
		if o.FP == fp || asked {
			why = "restarted"
		}
		d.Stop = append(d.Stop, action{ID: id, Why: why})
		return &action{ID: id, Why: why}
	case asked:
		d.Succeed = append(d.Succeed, action{ID: id, Pred: id, Why: "restart"})
	case running && o.FP == fp:
		d.Keep = append(d.Keep, id)
	case running:
		d.Succeed = append(d.Succeed, action{ID: id, Pred: id, Why: "changed"})
	case o != nil:
		return &action{ID: id, Why: "enabled"}
	default:
		return &action{ID: id, Why: "added"}
	}
	return nil
}

// predecessor returns the first removed entry, not yet taken, that is
// running, working, of pe's kind and shares a claim with pe.
func predecessor(pe PlanEntry, removed []*oldEntry, taken map[string]bool) string {
	for _, o := range removed {
		if taken[o.ID] || o.Disabled || o.Broken || o.Kind != pe.Entry.Name {
			continue
		}
		for _, c := range pe.Spec.Claims {
			if slices.Contains(o.Claims, c) {
				return o.ID
			}
		}
	}
	return ""
}

// schedule fills in what each start and succession waits for and its
// wave, and moves the successions that wait for each other in a circle to
// Refuse.
func (d *decision) schedule(old []oldEntry, entries []PlanEntry) {
	stopped := map[string]bool{}
	for _, a := range d.Stop {
		stopped[a.ID] = true
	}
	holder := map[claimKey]string{} // claims that stay held while the reload starts
	for _, o := range old {
		if o.Disabled || stopped[o.ID] {
			continue
		}
		for _, c := range o.Claims {
			holder[claimKey{o.Kind, c}] = o.ID
		}
	}
	successor := map[string]string{} // predecessor → successor
	for _, a := range d.Succeed {
		successor[a.Pred] = a.ID
	}
	spec := map[string]PlanEntry{}
	for _, pe := range entries {
		spec[pe.Entry.ID] = pe
	}
	nodes := map[string]*action{}
	for _, list := range [][]action{d.Start, d.Succeed} {
		for i := range list {
			a := &list[i]
			nodes[a.ID] = a
			pe := spec[a.ID]
			for _, c := range pe.Spec.Claims {
				h := holder[claimKey{pe.Entry.Name, c}]
				if f, ok := successor[h]; ok && h != a.Pred {
					a.After = append(a.After, hold{Claim: c, Holder: h, For: f})
				}
			}
		}
	}
	d.order(nodes)
}

// order numbers the starts and successions by the longest chain of waits
// below them, and refuses the successions on a circle of waits (a claim
// cannot move before its holder's successor has taken over).
func (d *decision) order(nodes map[string]*action) {
	circle := map[string]bool{}
	for id := range nodes {
		circle[id] = waitsFor(id, id, nodes)
	}
	waves := map[string]int{}
	var wave func(id string) int
	wave = func(id string) int {
		if n, ok := waves[id]; ok {
			return n
		}
		n := 0
		for _, w := range nodes[id].After {
			if !circle[w.For] { // the rest of the graph has no circle
				n = max(n, wave(w.For)+1)
			}
		}
		waves[id] = n
		return n
	}
	for id, a := range nodes {
		if !circle[id] {
			a.Wave = wave(id)
		}
	}
	for id, a := range nodes {
		if circle[id] {
			a.Reason = circleReason(*a, nodes)
		}
	}
	var kept []action
	for _, a := range d.Succeed {
		if a.Reason != "" {
			a.After = nil
			d.Refuse = append(d.Refuse, a)
			continue
		}
		kept = append(kept, a)
	}
	d.Succeed = kept
}

// circleReason explains why a, on a circle of successions, is refused.
func circleReason(a action, nodes map[string]*action) string {
	w := a.After[0]
	for _, x := range a.After {
		if waitsFor(x.For, a.ID, nodes) {
			w = x
			break
		}
	}
	how := "needs a name this entry holds"
	if !slices.ContainsFunc(nodes[w.For].After, func(x hold) bool { return x.Holder == a.Pred }) {
		how = "needs, through other entries, a name this entry holds"
	}
	return fmt.Sprintf("%s %q is held by entry %q, whose new config %s: each old instance serves until its successor is ready, so names cannot be swapped in one reload — swap them in two (first move one entry to an unused name)",
		w.Claim.Key, w.Claim.Value, w.Holder, how)
}

// waitsFor reports whether from waits, directly or not, for to.
func waitsFor(from, to string, nodes map[string]*action) bool {
	seen := map[string]bool{}
	stack := []string{from}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, w := range nodes[id].After {
			if w.For == to {
				return true
			}
			if !seen[w.For] {
				seen[w.For] = true
				stack = append(stack, w.For)
			}
		}
	}
	return false
}
