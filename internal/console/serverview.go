package console

import (
	"strings"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/naming"
)

// serverView is what a viewer may see of the servers' definitions: sees is
// the policy's screen, known says whether the registry knows a public name
// of a kind (published, or withheld by its source).
type serverView struct {
	sees  func(gateway.Offer, string) bool
	known func(gateway.Offer, string) bool
}

// screen is st as the viewer may see it: the pin notes and scan findings
// of definitions hidden from them are left out, and so are the withheld
// names those findings are of. st's slices are not changed.
func (v serverView) screen(st host.Status) host.Status {
	var notes []string
	for _, n := range st.PinNotes {
		if v.seesNote(st.Name, n) {
			notes = append(notes, n)
		}
	}
	st.PinNotes = notes
	st.Scan = v.screenScan(st.Name, st.Scan)
	return st
}

// Pin notes name a definition by its raw name: "withheld tool NAME: why",
// "published prompt NAME (pin: warn): why" (mcpclient's Status).
const (
	withheldNote  = ": "
	publishedNote = " (pin: warn): "
)

// seesNote says whether the viewer may see a pin note of server. A raw
// name may hold the note's separator, so each place the separator is
// could end the name: the readings the registry knows decide, or when
// it knows none, every reading. A note of another shape is not shown.
func (v serverView) seesNote(server, note string) bool {
	kind, names, ok := noteNames(note)
	if !ok {
		return false
	}
	var publics, known []string
	for _, raw := range names {
		p := naming.Public(server, raw)
		publics = append(publics, p)
		if v.known(kind, p) {
			known = append(known, p)
		}
	}
	if len(known) == 0 {
		known = publics
	}
	for _, p := range known {
		if !v.sees(kind, p) {
			return false
		}
	}
	return true
}

// noteNames is the kind of definition a pin note is of, and each raw
// name it may be read as naming; ok is false for a note of another shape.
func noteNames(note string) (gateway.Offer, []string, bool) {
	sep := withheldNote
	rest, ok := strings.CutPrefix(note, "withheld ")
	if !ok {
		if rest, ok = strings.CutPrefix(note, "published "); !ok {
			return 0, nil, false
		}
		sep = publishedNote
	}
	kind := gateway.OfferTool
	if r, ok := strings.CutPrefix(rest, "prompt "); ok {
		kind, rest = gateway.OfferPrompt, r
	} else if rest, ok = strings.CutPrefix(rest, "tool "); !ok {
		return 0, nil, false
	}
	var names []string
	for i := strings.Index(rest, sep); i >= 0; {
		names = append(names, rest[:i])
		next := strings.Index(rest[i+1:], sep)
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return kind, names, len(names) > 0
}

// screenScan is r with the findings of definitions hidden from the viewer
// left out, and the withheld names of which a finding is hidden (or none
// is shown); nil when no finding is left.
func (v serverView) screenScan(server string, r *host.ScanReport) *host.ScanReport {
	if r == nil {
		return nil
	}
	out := &host.ScanReport{}
	shown, hidden := map[string]bool{}, map[string]bool{}
	for _, f := range r.Findings {
		kind := gateway.OfferTool
		if f.Kind == "prompt" {
			kind = gateway.OfferPrompt
		}
		if v.sees(kind, naming.Public(cmpOr(f.Server, server), f.Tool)) {
			out.Findings = append(out.Findings, f)
			shown[f.Tool] = true
		} else {
			hidden[f.Tool] = true
		}
	}
	if len(out.Findings) == 0 {
		return nil
	}
	for _, h := range r.Held {
		if shown[h] && !hidden[h] {
			out.Held = append(out.Held, h)
		}
	}
	return out
}
