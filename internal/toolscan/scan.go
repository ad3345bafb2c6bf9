package toolscan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpbridge/mcpbridge/tool"
)

// Severity says how sure a finding is that the text addresses the model.
type Severity int

// The severities, weakest first. Medium and High are "flagged": they make
// scan exit 1 and scan: hold withhold the tool.
const (
	Low Severity = iota + 1
	Medium
	High
)

// String returns "low", "medium" or "high".
func (s Severity) String() string {
	switch s {
	case Low:
		return "low"
	case Medium:
		return "medium"
	case High:
		return "high"
	}
	return "severity(" + strconv.Itoa(int(s)) + ")"
}

// MarshalText writes the severity's name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a severity's name.
func (s *Severity) UnmarshalText(b []byte) error {
	for _, v := range []Severity{Low, Medium, High} {
		if v.String() == string(b) {
			*s = v
			return nil
		}
	}
	return fmt.Errorf("unknown severity %q (want low, medium or high)", b)
}

// Finding is one piece of text of a definition that a rule matched.
type Finding struct {
	// Tool is the tool's (or prompt's) name as its server lists it.
	Tool string `json:"tool"`
	// Kind is "prompt" for a prompt, empty for a tool.
	Kind   string `json:"kind,omitempty"`
	Server string `json:"server"`
	// Severity, Rule: what matched and how sure it is.
	Severity Severity `json:"severity"`
	Rule     string   `json:"rule"`
	// Field is a JSON pointer (RFC 6901) into the definition, such as
	// /inputSchema/properties/path/description.
	Field string `json:"field"`
	// Excerpt is the matched text, short, with invisible and control
	// characters escaped (\u202E, \U000E0041, \n).
	Excerpt string `json:"excerpt"`
}

// Flagged reports whether any finding is medium or high.
func Flagged(fs []Finding) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool { return f.Severity >= Medium })
}

// Options bound a scan. Zero fields mean the defaults.
type Options struct {
	// MaxFindings caps the findings of one definition (default 32): the
	// strongest are kept, and one more finding (rule "limit") says how
	// many were not.
	MaxFindings int
	// MaxStringBytes caps how much of one string is scanned (default 32
	// KiB): its first and last halves; a longer string gets a finding
	// (rule "truncated", medium, as the middle is unread).
	MaxStringBytes int
	// MaxDefinitionBytes caps the text scanned per definition (default
	// 512 KiB); the strings beyond it get one finding (rule "limit").
	MaxDefinitionBytes int
}

// Scanner scans definitions within its Options.
type Scanner struct {
	opts Options
}

// New returns a scanner with opts, defaults filled in.
func New(opts Options) *Scanner {
	if opts.MaxFindings <= 0 {
		opts.MaxFindings = 32
	}
	if opts.MaxStringBytes <= 0 {
		opts.MaxStringBytes = 32 << 10
	}
	if opts.MaxDefinitionBytes <= 0 {
		opts.MaxDefinitionBytes = 512 << 10
	}
	return &Scanner{opts: opts}
}

// Tool scans every string of a tool's definition: name, title,
// description, and every string of its schemas and annotations (property
// names included). Findings name the server's own name for the tool
// (Origin.Name) when it has one.
func (s *Scanner) Tool(t tool.Tool) []Finding {
	w := s.walker(t.Origin.Server, cmpOr(t.Origin.Name, t.Name), "")
	w.textAt("name", cmpOr(t.Origin.Name, t.Name))
	w.textAt("title", t.Title)
	w.textAt("description", t.Description)
	w.rawAt("inputSchema", t.InputSchema)
	w.rawAt("outputSchema", t.OutputSchema)
	w.rawAt("annotations", t.Annotations)
	return w.done()
}

// Prompt scans a prompt's name, title, description and each argument's
// name, title and description.
func (s *Scanner) Prompt(p tool.Prompt) []Finding {
	w := s.walker(p.Origin.Server, cmpOr(p.Origin.Name, p.Name), "prompt")
	w.textAt("name", cmpOr(p.Origin.Name, p.Name))
	w.textAt("title", p.Title)
	w.textAt("description", p.Description)
	for i, a := range p.Arguments {
		w.push("arguments", strconv.Itoa(i))
		w.textAt("name", a.Name)
		w.textAt("title", a.Title)
		w.textAt("description", a.Description)
		w.pop(2)
	}
	return w.done()
}

// Text scans one string as the field (one key) of a definition; for tests,
// which score rules on bare text.
func (s *Scanner) Text(field, text string) []Finding {
	w := s.walker("", "", "")
	w.textAt(strings.TrimPrefix(field, "/"), text)
	return w.done()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// walker collects the findings of one definition within the limits.
type walker struct {
	s         *Scanner
	base      Finding // Tool, Kind, Server
	path      []string
	out       []Finding
	seenAt    string              // the field of seen
	seen      map[string]Severity // rules already reported at seenAt
	scanned   int                 // bytes of text scanned so far
	capped    bool                // MaxDefinitionBytes reached
	dropped   int                 // findings beyond MaxFindings, not kept
	droppedAt string              // the field of the first of them
	report    reportFunc          // w.here, made once
}

func (s *Scanner) walker(server, name, kind string) *walker {
	w := &walker{s: s, base: Finding{Tool: name, Kind: kind, Server: server}}
	w.report = w.here
	return w
}

func (w *walker) push(keys ...string) { w.path = append(w.path, keys...) }
func (w *walker) pop(n int)           { w.path = w.path[:len(w.path)-n] }

// field is the JSON pointer of where the walk is.
func (w *walker) field() string {
	var b strings.Builder
	for _, k := range w.path {
		b.WriteByte('/')
		b.WriteString(pointerEscape(k))
	}
	return b.String()
}

// here records a finding at the current field, once per rule and field
// (a string can match a rule again in its decoded or truncated parts),
// the strongest: a weak match first must not hide a strong one after it.
// Past MaxFindings a finding replaces the weakest kept one if it is
// stronger, for the same reason: Flagged must see every finding.
func (w *walker) here(sev Severity, rule, excerpt string) {
	field := w.field()
	if w.seen == nil {
		w.seen = map[string]Severity{}
	}
	if field != w.seenAt {
		w.seenAt = field
		clear(w.seen)
	}
	if w.seen[rule] >= sev {
		return
	}
	w.seen[rule] = sev
	if i := slices.IndexFunc(w.out, func(f Finding) bool { return f.Rule == rule && f.Field == field }); i >= 0 {
		if w.out[i].Severity < sev {
			w.out[i].Severity, w.out[i].Excerpt = sev, excerpt
		}
		return
	}
	if len(w.out) == w.s.opts.MaxFindings {
		if w.dropped++; w.dropped == 1 {
			w.droppedAt = field
		}
		i := w.weakest()
		if w.out[i].Severity >= sev {
			return
		}
		w.out = slices.Delete(w.out, i, i+1)
	}
	w.emit(sev, rule, field, excerpt)
}

// weakest returns the index of the last of the weakest findings kept.
func (w *walker) weakest() int {
	i := 0
	for j, f := range w.out {
		if f.Severity <= w.out[i].Severity {
			i = j
		}
	}
	return i
}

func (w *walker) emit(sev Severity, rule, field, excerpt string) {
	f := w.base
	f.Severity, f.Rule, f.Field, f.Excerpt = sev, rule, field, excerpt
	w.out = append(w.out, f)
}

// done returns the findings, strongest first, then in field order, and
// last, one saying how many were not kept, if any.
func (w *walker) done() []Finding {
	slices.SortStableFunc(w.out, func(a, b Finding) int { return int(b.Severity - a.Severity) })
	if w.dropped > 0 {
		w.emit(Low, "limit", w.droppedAt, fmt.Sprintf("%d more findings not shown (at most %d per definition)", w.dropped, w.s.opts.MaxFindings))
	}
	return w.out
}

func (w *walker) textAt(key, s string) {
	w.push(key)
	w.text(s)
	w.pop(1)
}

// pointerEscape escapes a key for a JSON pointer (RFC 6901).
func pointerEscape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// text scans one string within the per-string and per-definition limits.
func (w *walker) text(s string) {
	if s == "" || w.capped {
		return
	}
	if w.scanned+min(len(s), w.s.opts.MaxStringBytes) > w.s.opts.MaxDefinitionBytes {
		w.capped = true
		w.here(Medium, "limit", fmt.Sprintf("definition has more than %d bytes of text; the rest is not scanned", w.s.opts.MaxDefinitionBytes))
		return
	}
	if max := w.s.opts.MaxStringBytes; len(s) > max {
		w.here(Medium, "truncated", fmt.Sprintf("%d bytes, only the first and last %d scanned", len(s), max/2))
		head, tail := cutValid(s, max/2, false), cutValid(s, max/2, true)
		w.scanned += len(head) + len(tail)
		scanText(head, 0, w.report)
		scanText(tail, 0, w.report)
		return
	}
	w.scanned += len(s)
	scanText(s, 0, w.report)
}

// cutValid returns about n bytes of s from its start (or end), cut on a
// rune boundary.
func cutValid(s string, n int, tail bool) string {
	if !tail {
		for n > 0 && n < len(s) && !runeStart(s[n]) {
			n--
		}
		return s[:n]
	}
	i := len(s) - n
	for i < len(s) && !runeStart(s[i]) {
		i++
	}
	return s[i:]
}

func runeStart(b byte) bool { return b&0xC0 != 0x80 }
