package mcpclient

import (
	"fmt"
	"hash/maphash"
	"log/slog"

	"github.com/mcpbridge/mcpbridge/internal/toolscan"
	"github.com/mcpbridge/mcpbridge/tool"
)

// ScanMode says what the definition scan does at each sync (docs/scan.md).
type ScanMode string

// The scan modes; "" means ScanWarn.
const (
	// ScanWarn reports findings in Status and the log.
	ScanWarn ScanMode = "warn"
	// ScanHold also withholds each tool or prompt with a medium or high
	// finding: not registered, so no consumer lists or calls it.
	ScanHold ScanMode = "hold"
	// ScanOff scans nothing.
	ScanOff ScanMode = "off"
)

func (c Config) checkScan(report reportFunc) {
	switch c.Scan {
	case "", ScanWarn, ScanHold, ScanOff:
	default:
		report(fmt.Sprintf(`must be "warn", "hold" or "off", got %q`, c.Scan), "scan")
	}
}

// scanMemo holds the findings of the definitions of the last sync by a
// hash of their text, so that a sync rescans and logs only what changed.
type scanMemo struct {
	seed  maphash.Seed
	last  map[uint64][]toolscan.Finding
	held  map[string]bool // withheld at the last sync, by kind and name
	ready bool
}

// screen runs the definition scan on the offer about to be published:
// its findings go to Status and, when new, to the log; with scan: hold
// the flagged tools and prompts are left out of the offer. Runs on the
// supervisor goroutine only.
func (s *Server) screen(o tool.Offer) tool.Offer {
	mode := s.cfg.Scan
	if s.opts.ScanAll {
		mode = ScanWarn
	}
	if mode == ScanOff {
		s.setScan(nil)
		return o
	}
	m := &s.scanned
	if !m.ready {
		m.seed, m.ready = maphash.MakeSeed(), true
	}
	sc := toolscan.New(toolscan.Options{})
	next := map[uint64][]toolscan.Finding{}
	held := map[string]bool{}
	var all []toolscan.Finding
	keep := func(kind, name string, sum uint64, scan func() []toolscan.Finding) bool {
		fs, seen := m.last[sum]
		if !seen {
			fs = scan()
			s.logFindings(fs)
		}
		next[sum] = fs
		all = append(all, fs...)
		if mode != ScanHold || !toolscan.Flagged(fs) {
			return true
		}
		held[kind+" "+name] = true
		if !m.held[kind+" "+name] {
			s.log.Warn("withheld: the definition scan flagged it (scan: hold)", kind, name)
		}
		return false
	}
	tools := make([]tool.Tool, 0, len(o.Tools))
	for _, t := range o.Tools {
		if keep("tool", t.Origin.Name, m.toolSum(t), func() []toolscan.Finding { return sc.Tool(t) }) {
			tools = append(tools, t)
		} else {
			o.Withheld = withheld(o.Withheld, t.Name, scanHeldWhy)
		}
	}
	prompts := make([]tool.Prompt, 0, len(o.Prompts))
	for _, p := range o.Prompts {
		if keep("prompt", p.Origin.Name, m.promptSum(p), func() []toolscan.Finding { return sc.Prompt(p) }) {
			prompts = append(prompts, p)
		}
	}
	m.last, m.held = next, held
	s.setScan(report(all, held))
	o.Tools, o.Prompts = tools, prompts
	return o
}

// scanHeldWhy is what a call of a tool the scan withholds answers: the
// findings stay in status and the log, as the model must not read them.
const scanHeldWhy = "the definition scan flagged it (scan: hold); it is published again once its server changes it, or with scan: warn on its entry"

// withheld returns held, made when nil, with name withheld for why.
func withheld(held map[string]string, name, why string) map[string]string {
	if held == nil {
		held = map[string]string{}
	}
	held[name] = why
	return held
}

// toolSum hashes every field of t that the scan reads.
func (m *scanMemo) toolSum(t tool.Tool) uint64 {
	var h maphash.Hash
	h.SetSeed(m.seed)
	for _, f := range []string{"tool", t.Origin.Name, t.Name, t.Title, t.Description, string(t.InputSchema), string(t.OutputSchema), string(t.Annotations)} {
		h.WriteString(f)
		h.WriteByte(0)
	}
	return h.Sum64()
}

func (m *scanMemo) promptSum(p tool.Prompt) uint64 {
	var h maphash.Hash
	h.SetSeed(m.seed)
	for _, f := range []string{"prompt", p.Origin.Name, p.Name, p.Title, p.Description} {
		h.WriteString(f)
		h.WriteByte(0)
	}
	for _, a := range p.Arguments {
		for _, f := range []string{a.Name, a.Title, a.Description} {
			h.WriteString(f)
			h.WriteByte(0)
		}
	}
	return h.Sum64()
}

// logFindings logs a definition's findings: medium and high as warnings.
func (s *Server) logFindings(fs []toolscan.Finding) {
	for _, f := range fs {
		level := slog.LevelWarn
		if f.Severity < toolscan.Medium {
			level = slog.LevelDebug
		}
		s.log.Log(s.ctx, level, "definition scan finding", kindOf(f), f.Tool, "severity", f.Severity.String(), "rule", f.Rule, "field", f.Field, "excerpt", f.Excerpt)
	}
}

// report turns findings into what Status shows; nil when there are none.
func report(fs []toolscan.Finding, held map[string]bool) *ScanReport {
	if len(fs) == 0 {
		return nil
	}
	r := &ScanReport{Findings: make([]ScanFinding, len(fs))}
	for i, f := range fs {
		r.Findings[i] = ScanFinding{Tool: f.Tool, Kind: f.Kind, Server: f.Server, Severity: f.Severity.String(), Rule: f.Rule, Field: f.Field, Excerpt: f.Excerpt}
	}
	listed := map[string]bool{}
	for _, f := range fs {
		if key := kindOf(f) + " " + f.Tool; held[key] && !listed[key] {
			listed[key] = true
			r.Held = append(r.Held, f.Tool)
		}
	}
	return r
}

func (s *Server) setScan(r *ScanReport) {
	s.mu.Lock()
	s.status.Scan = r
	s.mu.Unlock()
}

// kindOf is "tool" or "prompt".
func kindOf(f toolscan.Finding) string {
	if f.Kind != "" {
		return f.Kind
	}
	return "tool"
}
