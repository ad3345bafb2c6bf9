package console

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/naming"
)

// A pin note is read as naming each name it may: a raw name can hold the
// note's separator.
func TestNoteNames(t *testing.T) {
	for _, tc := range []struct {
		note  string
		kind  gateway.Offer
		names []string
	}{
		{"withheld tool get-sum: changed since pinned: description", gateway.OfferTool, []string{"get-sum", "get-sum: changed since pinned"}},
		{"published prompt greet (pin: warn): not pinned", gateway.OfferPrompt, []string{"greet"}},
		{"withheld tool a: b", gateway.OfferTool, []string{"a"}},
	} {
		kind, names, ok := noteNames(tc.note)
		if !ok || kind != tc.kind || !slices.Equal(names, tc.names) {
			t.Errorf("noteNames(%q) = %v %q %v, want %v %q", tc.note, kind, names, ok, tc.kind, tc.names)
		}
	}
	for _, note := range []string{"withheld tool no-separator", "withheld resource r: why", "changed tool t: why", "published tool t: why"} {
		if _, names, ok := noteNames(note); ok {
			t.Errorf("noteNames(%q) = %q, want a note of no known shape", note, names)
		}
	}
}

// A viewer sees a pin note or scan finding of a definition the policy
// lets them see only. Of a note's readings those the registry knows
// decide: a why holding the separator hides no note of a visible tool;
// when none is known, every reading must be visible.
func TestServerViewScreens(t *testing.T) {
	pub := func(raw string) string { return naming.Public("srv", raw) }
	hidden := map[string]bool{pub("secret"): true, pub("a: b"): true, pub("quiet"): true}
	v := serverView{
		sees:  func(_ gateway.Offer, name string) bool { return !hidden[name] },
		known: func(kind gateway.Offer, name string) bool { return kind == gateway.OfferTool && name != pub("a: b") },
	}
	st := host.Status{Name: "srv", PinNotes: []string{
		"withheld tool open: changed since pinned: description", // known reading open: shown
		"withheld tool secret: not pinned",                      // hidden
		"withheld prompt a: b: not pinned",                      // unknown: a, and a: b hidden
		"withheld prompt plain: not pinned",                     // unknown, visible
		"a note of another shape",
	}, Scan: &host.ScanReport{Findings: []host.ScanFinding{
		{Tool: "open", Server: "srv"}, {Tool: "secret", Server: "srv"}, {Tool: "quiet", Kind: "prompt"}, {Tool: "both"}, {Tool: "both", Kind: "prompt", Server: "srv"},
	}, Held: []string{"open", "secret", "quiet", "both"}}}
	hidden[pub("both")] = false
	got := v.screen(st)
	want := host.Status{Name: "srv", PinNotes: []string{"withheld tool open: changed since pinned: description", "withheld prompt plain: not pinned"},
		Scan: &host.ScanReport{Findings: []host.ScanFinding{{Tool: "open", Server: "srv"}, {Tool: "both"}, {Tool: "both", Kind: "prompt", Server: "srv"}}, Held: []string{"open", "both"}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("screened status (-want +got):\n%s", d)
	}
	if len(st.PinNotes) != 5 || len(st.Scan.Findings) != 5 {
		t.Errorf("screening changed the host's status: %v", st)
	}
	if got := v.screenScan("srv", &host.ScanReport{Findings: []host.ScanFinding{{Tool: "secret"}}, Held: []string{"secret"}}); got != nil {
		t.Errorf("a scan whose every finding is hidden: %v, want none", got)
	}
}
