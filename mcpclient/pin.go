package mcpclient

import (
	"fmt"
	"slices"

	"github.com/mcpbridge/mcpbridge/tool"
)

// Pins decides which of a server's tools and prompts may be published: for
// each, why it may not ("" when it may), such as "changed since pinned:
// description". The CLI's is a lock of pinned definitions
// (internal/pin); one Pins serves every server of a host, so it is safe
// for concurrent use.
type Pins interface {
	CheckTools(server string, tools []tool.Tool) []string
	CheckPrompts(server string, prompts []tool.Prompt) []string
}

// pinned withholds from o the tools and prompts its pins refuse
// (Options.Pins, Config.Pin), before anything reaches the registry, and
// records what it found for Status; a refusal newly found (a change
// mid-session) is logged.
func (s *Server) pinned(o tool.Offer) tool.Offer {
	var notes []string
	if p := s.opts.Pins; p != nil && s.cfg.Pin != PinOff {
		hold := s.cfg.Pin != PinWarn
		var tn, pn []string
		why := p.CheckTools(s.cfg.ServerName, o.Tools)
		if hold {
			o.Withheld = heldTools(o.Withheld, o.Tools, why, advice(p, s.cfg.ServerName))
		}
		o.Tools, tn = withhold(o.Tools, why, func(t tool.Tool) string { return "tool " + t.Origin.Name }, hold)
		o.Prompts, pn = withhold(o.Prompts, p.CheckPrompts(s.cfg.ServerName, o.Prompts), func(p tool.Prompt) string { return "prompt " + p.Origin.Name }, hold)
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

// heldTools adds to held the tools whose why is not "", by public name:
// why, and then advice when there is one (the registry's answer to their
// calls).
func heldTools(held map[string]string, tools []tool.Tool, why []string, advice string) map[string]string {
	for i, t := range tools {
		if why[i] == "" {
			continue
		}
		text := why[i]
		if advice != "" {
			text += "; " + advice
		}
		held = withheld(held, t.Name, text)
	}
	return held
}

// advice is how the user accepts server's withheld definitions, when p
// can say (the CLI's lock: "mcpbridge pin SERVER"); "" when it cannot.
func advice(p Pins, server string) string {
	if a, ok := p.(interface{ Advice(server string) string }); ok {
		return a.Advice(server)
	}
	return ""
}

// withhold returns the items whose why is "" (all of them unless hold), in
// a new slice, and a note for each refused one, named by name.
func withhold[T any](items []T, why []string, name func(T) string, hold bool) ([]T, []string) {
	var kept []T
	var notes []string
	for i, it := range items {
		switch {
		case why[i] == "":
			kept = append(kept, it)
		case hold:
			notes = append(notes, fmt.Sprintf("withheld %s: %s", name(it), why[i]))
		default:
			kept = append(kept, it)
			notes = append(notes, fmt.Sprintf("published %s (pin: warn): %s", name(it), why[i]))
		}
	}
	return kept, notes
}
