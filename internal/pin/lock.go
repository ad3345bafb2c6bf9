package pin

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpbridge/mcpbridge/internal/atomicfile"
)

// FileName is the lock's name beside a config file.
const FileName = "mcpbridge.lock"

// lockVersion is the format of the lock file this package writes.
const lockVersion = 1

// maxLockBytes bounds the lock read: 312 real tools take about 300 KiB.
const maxLockBytes = 64 << 20

// Lock is the pinned definitions of every server of a config, as the lock
// file holds them. A Lock is a plain value: not safe for concurrent use.
type Lock struct {
	Version int                    `json:"lockVersion"`
	Servers map[string]*ServerPins `json:"servers"`
}

// ServerPins are one server's pins by raw name.
type ServerPins struct {
	Tools   map[string]Pin `json:"tools"`
	Prompts map[string]Pin `json:"prompts"`
}

func newServerPins() *ServerPins {
	return &ServerPins{Tools: map[string]Pin{}, Prompts: map[string]Pin{}}
}

// Pin is one pinned definition: its canonical JSON and that text's SHA-256.
type Pin struct {
	SHA256     string          `json:"sha256"`
	Definition json.RawMessage `json:"definition"`
}

// NewLock returns an empty lock.
func NewLock() *Lock { return &Lock{Version: lockVersion, Servers: map[string]*ServerPins{}} }

// pins returns the pins of kind of server (nil when it has none).
func (l *Lock) pins(server string, kind Kind) map[string]Pin {
	if sp := l.Servers[server]; sp != nil {
		return sp.of(kind)
	}
	return nil
}

// of returns the pins of kind.
func (sp *ServerPins) of(kind Kind) map[string]Pin {
	if kind == KindPrompt {
		return sp.Prompts
	}
	return sp.Tools
}

// Has reports whether the lock holds pins for server.
func (l *Lock) Has(server string) bool { return l.Servers[server] != nil }

// Set replaces the pins of server by defs.
func (l *Lock) Set(server string, defs []Def) {
	l.Servers[server] = newServerPins()
	for _, d := range defs {
		l.add(server, d)
	}
}

// add pins d for server, which the lock already has.
func (l *Lock) add(server string, d Def) {
	l.Servers[server].of(d.Kind)[d.Name] = pinOf(d)
}

// pinOf is d's pin: its canonical JSON and hash.
func pinOf(d Def) Pin { return Pin{SHA256: d.SHA256, Definition: d.Canonical} }

// Check returns why d may not be published under this lock: "" when its
// pin matches, "not pinned" or "changed since pinned: <fields>".
func (l *Lock) Check(server string, d Def) string {
	p, ok := l.pins(server, d.Kind)[d.Name]
	if !ok {
		return "not pinned"
	}
	return p.check(d)
}

// check returns why d may not be published under pin p: "" when it
// matches, else "changed since pinned: <fields>" ("definition" when p
// holds a hash alone).
func (p Pin) check(d Def) string {
	if p.SHA256 == d.SHA256 {
		return ""
	}
	return "changed since pinned: " + strings.Join(Changed(p.Definition, d.Canonical), ", ")
}

// Marshal returns the lock file's text: indented JSON, keys sorted, one
// field of a definition per line, so that a diff shows what changed.
func (l *Lock) Marshal() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(l); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Write replaces the lock file at path atomically, creating its directory
// (private, as state is) when missing.
func (l *Lock) Write(path string) error {
	data, err := l.Marshal()
	if err == nil {
		err = os.MkdirAll(filepath.Dir(path), 0o700)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := atomicfile.Write(path, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// Read reads the lock file at path: (nil, nil) when there is none. A lock
// that cannot be trusted whole (not JSON, unknown fields, a hash that does
// not match its definition) is an error at its position, never an empty
// lock: that would unpin every definition silently.
func Read(path string) (*Lock, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the lock: %w", err)
	}
	defer f.Close()
	data, err := readBounded(f)
	if err != nil {
		return nil, fmt.Errorf("reading the lock %s: %w", path, err)
	}
	l, err := Parse(data)
	if err != nil {
		return nil, &lockError{path: path, err: err}
	}
	return l, nil
}

func readBounded(f *os.File) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(f, maxLockBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxLockBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxLockBytes)
	}
	return data, nil
}

// lockError is a problem of the lock file at path: each line of err (a
// line:col: message) prefixed with the path, the way compilers write them.
type lockError struct {
	path string
	err  error
}

func (e *lockError) Error() string {
	lines := strings.Split(e.err.Error(), "\n")
	for i, l := range lines {
		lines[i] = e.path + ":" + l
	}
	return strings.Join(lines, "\n")
}

func (e *lockError) Unwrap() error { return e.err }

// DiffLines says how defs, server's definitions now, differ from the
// lock's pins: a line for each definition not pinned ("+"), changed ("~",
// followed by each changed field's pinned and current values) or pinned
// but no longer offered ("-"), in order of kind and name.
func DiffLines(l *Lock, server string, defs []Def) []string {
	var out []string
	seen := map[Kind]map[string]bool{KindTool: {}, KindPrompt: {}}
	for _, d := range sortedDefs(defs) {
		seen[d.Kind][d.Name] = true
		p, ok := l.pins(server, d.Kind)[d.Name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("+ %s %s/%s: not pinned", d.Kind, server, d.Name))
		case p.SHA256 != d.SHA256:
			out = append(out, fmt.Sprintf("~ %s %s/%s: %s", d.Kind, server, d.Name, l.Check(server, d)))
			out = append(out, fieldLines(p.Definition, d.Canonical)...)
		}
	}
	for _, kind := range []Kind{KindTool, KindPrompt} {
		pins := l.pins(server, kind)
		for _, name := range slices.Sorted(maps.Keys(pins)) {
			if !seen[kind][name] {
				out = append(out, fmt.Sprintf("- %s %s/%s: pinned, no longer offered", kind, server, name))
			}
		}
	}
	return out
}

func sortedDefs(defs []Def) []Def {
	out := slices.Clone(defs)
	slices.SortFunc(out, func(a, b Def) int { return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name)) })
	return out
}

// fieldLines shows each changed field's pinned ("-") and current ("+")
// canonical JSON.
func fieldLines(was, now json.RawMessage) []string {
	var a, b map[string]json.RawMessage
	_ = json.Unmarshal(was, &a)
	_ = json.Unmarshal(now, &b)
	var out []string
	for _, k := range Changed(was, now) {
		if v, ok := a[k]; ok {
			out = append(out, fmt.Sprintf("    - %s: %s", k, v))
		}
		if v, ok := b[k]; ok {
			out = append(out, fmt.Sprintf("    + %s: %s", k, v))
		}
	}
	return out
}
