package host

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The reload decision, as a pure function: running entries and a new plan
// in, keep / stop / start / succeed / refuse out.
func TestDecide(t *testing.T) {
	claim := func(v string) []Claim { return []Claim{{Key: "claim", Value: v}} }
	// run is a running entry of kind fake with config value and claim c.
	run := func(id, value, c string) oldEntry {
		o := oldEntry{ID: id, Kind: "fake", FP: fingerprint("fake", fakeConfig{Value: value, Claim: c})}
		if c != "" {
			o.Claims = claim(c)
		}
		return o
	}
	broken := func(o oldEntry) oldEntry { o.Broken = true; return o }
	disabled := func(id string) oldEntry { return oldEntry{ID: id, Kind: "fake", Disabled: true} }
	// want is a plan entry of kind fake with config value and claim c.
	want := func(id, value, c string) PlanEntry {
		pe := PlanEntry{Entry: Entry{ID: id, Name: "fake"}, Spec: Spec{Config: fakeConfig{Value: value, Claim: c}}}
		if c != "" {
			pe.Spec.Claims = claim(c)
		}
		return pe
	}
	off := func(id string) PlanEntry { return PlanEntry{Entry: Entry{ID: id, Name: "fake", Disabled: true}} }
	other := func(pe PlanEntry) PlanEntry { pe.Entry.Name = "other"; return pe }
	const swapReason = `claim "Y" is held by entry "b", whose new config needs a name this entry holds: each old instance serves until its successor is ready, so names cannot be swapped in one reload — swap them in two (first move one entry to an unused name)`

	tests := []struct {
		name string
		old  []oldEntry
		plan []PlanEntry
		want decision
	}{{
		name: "first plan: everything starts",
		plan: []PlanEntry{want("a", "1", "A"), want("b", "1", ""), off("c")},
		want: decision{Start: []action{{ID: "a", Why: "added"}, {ID: "b", Why: "added"}}},
	}, {
		name: "unchanged entries are kept",
		old:  []oldEntry{run("a", "1", "A"), run("b", "1", ""), disabled("c")},
		plan: []PlanEntry{want("b", "1", ""), want("a", "1", "A"), off("c")},
		want: decision{Keep: []string{"b", "a"}},
	}, {
		name: "a changed entry succeeds itself",
		old:  []oldEntry{run("a", "1", "A"), run("b", "1", "B")},
		plan: []PlanEntry{want("a", "2", "A"), want("b", "1", "B")},
		want: decision{Keep: []string{"b"}, Succeed: []action{{ID: "a", Pred: "a", Why: "changed"}}},
	}, {
		name: "a changed entry may change its claim",
		old:  []oldEntry{run("a", "1", "A")},
		plan: []PlanEntry{want("a", "2", "Z")},
		want: decision{Succeed: []action{{ID: "a", Pred: "a", Why: "changed"}}},
	}, {
		name: "removed and disabled entries stop; enabled ones start",
		old:  []oldEntry{run("a", "1", "A"), run("b", "1", "B"), disabled("c"), disabled("d")},
		plan: []PlanEntry{off("a"), want("c", "1", "C"), off("d")},
		want: decision{
			Stop:  []action{{ID: "a", Why: "disabled"}, {ID: "b", Why: "removed"}},
			Start: []action{{ID: "c", Why: "enabled"}},
		},
	}, {
		name: "a broken entry is stopped and started again, changed or not",
		old:  []oldEntry{broken(run("a", "1", "A")), broken(run("b", "1", "B"))},
		plan: []PlanEntry{want("a", "1", "A"), want("b", "2", "B")},
		want: decision{
			Stop:  []action{{ID: "a", Why: "restarted"}, {ID: "b", Why: "changed"}},
			Start: []action{{ID: "a", Why: "restarted"}, {ID: "b", Why: "changed"}},
		},
	}, {
		name: "rename: the removed entry with the claim is the predecessor",
		old:  []oldEntry{run("old", "1", "S"), run("gone", "1", "G")},
		plan: []PlanEntry{want("new", "1", "S")},
		want: decision{
			Stop:    []action{{ID: "gone", Why: "removed"}},
			Succeed: []action{{ID: "new", Pred: "old", Why: "added"}},
		},
	}, {
		name: "no rename from a broken or disabled entry, or another kind",
		old: []oldEntry{broken(run("b", "1", "S")), disabled("d"),
			{ID: "o", Kind: "other", Claims: claim("T"), FP: "x"}},
		plan: []PlanEntry{want("n", "1", "S"), want("m", "1", "T")},
		want: decision{
			Stop:  []action{{ID: "b", Why: "removed"}, {ID: "d", Why: "removed"}, {ID: "o", Why: "removed"}},
			Start: []action{{ID: "n", Why: "added"}, {ID: "m", Why: "added"}},
		},
	}, {
		name: "a broken entry takes over from the removed entry with its claim",
		old:  []oldEntry{broken(run("new", "2", "S")), run("old", "1", "S")},
		plan: []PlanEntry{want("new", "3", "S")},
		want: decision{
			Stop:    []action{{ID: "new", Why: "changed"}},
			Succeed: []action{{ID: "new", Pred: "old", Why: "changed"}},
		},
	}, {
		name: "a claim freed by a stop needs no wait",
		old:  []oldEntry{run("a", "1", "S")},
		plan: []PlanEntry{off("a"), want("b", "1", "S")},
		want: decision{
			Stop:  []action{{ID: "a", Why: "disabled"}},
			Start: []action{{ID: "b", Why: "added"}},
		},
	}, {
		name: "a claim given up by a succession is waited for",
		old:  []oldEntry{run("a", "1", "S")},
		plan: []PlanEntry{want("a", "2", "T"), want("b", "1", "S")},
		want: decision{
			Succeed: []action{{ID: "a", Pred: "a", Why: "changed"}},
			Start: []action{{ID: "b", Why: "added", Wave: 1,
				After: []hold{{Claim: Claim{"claim", "S"}, Holder: "a", For: "a"}}}},
		},
	}, {
		name: "a chain: three waves",
		old:  []oldEntry{run("a", "1", "X"), run("b", "1", "Y"), run("c", "1", "Z")},
		plan: []PlanEntry{want("a", "2", "Y"), want("b", "2", "Z"), want("c", "2", "W")},
		want: decision{Succeed: []action{
			{ID: "a", Pred: "a", Why: "changed", Wave: 2, After: []hold{{Claim: Claim{"claim", "Y"}, Holder: "b", For: "b"}}},
			{ID: "b", Pred: "b", Why: "changed", Wave: 1, After: []hold{{Claim: Claim{"claim", "Z"}, Holder: "c", For: "c"}}},
			{ID: "c", Pred: "c", Why: "changed"},
		}},
	}, {
		name: "a swap is refused",
		old:  []oldEntry{run("a", "1", "X"), run("b", "1", "Y"), run("c", "1", "C")},
		plan: []PlanEntry{want("a", "2", "Y"), want("b", "2", "X"), want("c", "2", "C")},
		want: decision{
			Succeed: []action{{ID: "c", Pred: "c", Why: "changed"}},
			Refuse: []action{
				{ID: "a", Pred: "a", Why: "changed", Reason: swapReason},
				{ID: "b", Pred: "b", Why: "changed", Reason: `claim "X" is held by entry "a", whose new config needs a name this entry holds: each old instance serves until its successor is ready, so names cannot be swapped in one reload — swap them in two (first move one entry to an unused name)`},
			},
		},
	}, {
		name: "a circle of three is refused; what waits for it stays scheduled",
		old:  []oldEntry{run("a", "1", "X"), run("b", "1", "Y"), run("c", "1", "Z"), run("d", "1", "W")},
		plan: []PlanEntry{want("a", "2", "Y"), want("b", "2", "Z"), want("c", "2", "X"), want("e", "1", "W"), want("d", "2", "V")},
		want: decision{
			Start: []action{{ID: "e", Why: "added", Wave: 1, After: []hold{{Claim: Claim{"claim", "W"}, Holder: "d", For: "d"}}}},
			Succeed: []action{
				{ID: "d", Pred: "d", Why: "changed"},
			},
			Refuse: []action{
				{ID: "a", Pred: "a", Why: "changed", Reason: `claim "Y" is held by entry "b", whose new config needs, through other entries, a name this entry holds: each old instance serves until its successor is ready, so names cannot be swapped in one reload — swap them in two (first move one entry to an unused name)`},
				{ID: "b", Pred: "b", Why: "changed", Reason: `claim "Z" is held by entry "c", whose new config needs, through other entries, a name this entry holds: each old instance serves until its successor is ready, so names cannot be swapped in one reload — swap them in two (first move one entry to an unused name)`},
				{ID: "c", Pred: "c", Why: "changed", Reason: `claim "X" is held by entry "a", whose new config needs, through other entries, a name this entry holds: each old instance serves until its successor is ready, so names cannot be swapped in one reload — swap them in two (first move one entry to an unused name)`},
			},
		},
	}, {
		name: "waiting for a refused succession: scheduled, refused when it runs",
		old:  []oldEntry{run("a", "1", "X"), run("b", "1", "Y")},
		plan: []PlanEntry{want("a", "2", "Y"), want("b", "2", "X"), want("n", "1", "X")},
		// n needs X, which a keeps (Parse would refuse the plan: two
		// entries claim X; a Go-built plan is not checked for it).
		want: decision{
			Start: []action{{ID: "n", Why: "added", After: []hold{{Claim: Claim{"claim", "X"}, Holder: "a", For: "a"}}}},
			Refuse: []action{
				{ID: "a", Pred: "a", Why: "changed", Reason: swapReason},
				{ID: "b", Pred: "b", Why: "changed", Reason: `claim "X" is held by entry "a", whose new config needs a name this entry holds: each old instance serves until its successor is ready, so names cannot be swapped in one reload — swap them in two (first move one entry to an unused name)`},
			},
		},
	}, {
		name: "claims are per kind",
		old:  []oldEntry{run("a", "1", "S")},
		plan: []PlanEntry{want("a", "2", "T"), other(want("b", "1", "S"))},
		want: decision{
			Succeed: []action{{ID: "a", Pred: "a", Why: "changed"}},
			Start:   []action{{ID: "b", Why: "added"}},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decide(tt.old, tt.plan)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("decide (-want +got):\n%s", diff)
			}
		})
	}
}

// The log record of each kind of start.
func TestActionStarting(t *testing.T) {
	for _, tt := range []struct {
		a     action
		msg   string
		attrs []any
	}{
		{action{ID: "a", Why: "added"}, "added, starting", []any{"entry", "a"}},
		{action{ID: "a", Why: "enabled"}, "enabled, starting", []any{"entry", "a"}},
		{action{ID: "a", Why: "restarted"}, "failed earlier, restarting", []any{"entry", "a"}},
		{action{ID: "a", Why: "changed"}, "config changed, restarting", []any{"entry", "a"}},
		{action{ID: "a", Pred: "a", Why: "changed"}, "config changed, starting it (the previous config serves until it is ready)", []any{"entry", "a"}},
		{action{ID: "n", Pred: "o", Why: "added"}, "added, taking over from another entry (which serves until this one is ready)", []any{"entry", "n", "from", "o"}},
	} {
		msg, attrs := tt.a.starting()
		if msg != tt.msg || !cmp.Equal(attrs, tt.attrs) {
			t.Errorf("%+v: %q %v, want %q %v", tt.a, msg, attrs, tt.msg, tt.attrs)
		}
	}
}
