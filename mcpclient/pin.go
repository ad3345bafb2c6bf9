package mcpclient

import (
	"fmt"
	"slices"

	"github.com/mcpbridge/mcpbridge/internal/pin"
	"github.com/mcpbridge/mcpbridge/tool"
)

// pinned withholds from o the tools and prompts whose definitions differ
// from their pins (Options.Pins, Config.Pin), before anything reaches the
// registry, and records what it found for Status; a definition newly found
// different (a change mid-session) is logged.
func (s *Server) pinned(o tool.Offer) tool.Offer {
	var notes []string
	if s.opts.Pins != nil && s.cfg.Pin != PinOff {
		hold := s.cfg.Pin != PinWarn
		var tn, pn []string
		o.Tools, tn = checkPins(s.opts.Pins, s.cfg.ServerName, o.Tools, pin.ToolDef, hold)
		o.Prompts, pn = checkPins(s.opts.Pins, s.cfg.ServerName, o.Prompts, pin.PromptDef, hold)
		notes = append(tn, pn...)
	}
	s.mu.Lock()
	was := s.status.PinNotes
	s.status.PinNotes = notes
	s.mu.Unlock()
	for _, n := range notes {
		if !slices.Contains(was, n) {
			s.log.Warn("definition differs from its pin", "what", n)
		}
	}
	return o
}

// checkPins returns the items of server that book lets through (all of
// them unless hold) and a note for each that differs from its pin. An item
// whose definition cannot be pinned (not JSON) never passes a hold.
func checkPins[T any](book *pin.Book, server string, items []T, def func(T) (pin.Def, error), hold bool) ([]T, []string) {
	var defs []pin.Def
	var kept []T
	var notes []string
	note := func(what, why string) {
		if hold {
			notes = append(notes, fmt.Sprintf("withheld %s: %s", what, why))
		} else {
			notes = append(notes, fmt.Sprintf("published %s (pin: warn): %s", what, why))
		}
	}
	ok := items[:0:0]
	for _, it := range items {
		d, err := def(it)
		if err != nil {
			note(fmt.Sprintf("%s %s", d.Kind, d.Name), "cannot be pinned: "+err.Error())
			if !hold {
				kept = append(kept, it)
			}
			continue
		}
		defs, ok = append(defs, d), append(ok, it)
	}
	for i, why := range book.Check(server, defs) {
		if why != "" {
			note(fmt.Sprintf("%s %s", defs[i].Kind, defs[i].Name), why)
		}
		if why == "" || !hold {
			kept = append(kept, ok[i])
		}
	}
	return kept, notes
}
