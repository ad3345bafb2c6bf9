package mcptest

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Log is a slog handler that keeps every record, so tests can check what
// was logged: by level, message and attributes (HasRecord, CountRecords,
// WaitForRecord), the way the code logs it. Each record is also kept as
// one line, "LEVEL message key=value…" (attributes from With first), for
// failure messages (Lines). Groups are flattened. Safe for concurrent use.
// Build one with NewLog.
type Log struct {
	store *logStore
	attrs []slog.Attr
}

type logStore struct {
	mu      sync.Mutex
	records []Record
}

// Record is one log record as the handler received it: its attributes are
// those of the logger's With calls first, then the record's own, resolved.
type Record struct {
	Level   slog.Level
	Message string
	Attrs   []slog.Attr
}

// String renders r as "LEVEL message key=value…".
func (r Record) String() string {
	var b strings.Builder
	b.WriteString(r.Level.String() + " " + r.Message)
	for _, a := range r.Attrs {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
	}
	return b.String()
}

// Match reports whether r is at level, has exactly the message msg, and
// has every attribute of attrs, given as key-value pairs as to
// slog.Logger.Info. A value matches an attribute of its key when it is a
// [Matcher] that accepts the attribute's value, or when fmt.Sprint of it is
// the attribute's value as text (an error attribute is its Error(), a
// duration is "20ms"); [Absent] matches when r has no attribute of its
// key. Other attributes of r do not matter.
func (r Record) Match(level slog.Level, msg string, attrs ...any) bool {
	if r.Level != level || r.Message != msg {
		return false
	}
	if len(attrs)%2 != 0 {
		panic(fmt.Sprintf("mcptest: attrs %v are not key-value pairs", attrs))
	}
	for i := 0; i < len(attrs); i += 2 {
		key, ok := attrs[i].(string)
		if !ok {
			panic(fmt.Sprintf("mcptest: attribute key %v is not a string", attrs[i]))
		}
		want := attrs[i+1]
		_, absent := want.(absence)
		found := slices.ContainsFunc(r.Attrs, func(a slog.Attr) bool { return a.Key == key && (absent || matches(want, a.Value)) })
		if found == absent {
			return false
		}
	}
	return true
}

// A Matcher is an attribute value that [Record.Match] accepts by a test of
// its own rather than by equality.
type Matcher func(slog.Value) bool

// Contains matches an attribute whose value, as text, contains every one
// of parts (an error attribute: its Error()).
func Contains(parts ...string) Matcher {
	return func(v slog.Value) bool { return containsAll(v.String(), parts) }
}

// Absent, as the value of a key, matches a record without an attribute of
// that key.
const Absent absence = 0

type absence int

func matches(want any, v slog.Value) bool {
	if m, ok := want.(Matcher); ok {
		return m(v)
	}
	return fmt.Sprint(want) == v.String()
}

// NewLog returns an empty Log.
func NewLog() *Log { return &Log{store: &logStore{}} }

// Logger returns a logger that writes to l at every level.
func (l *Log) Logger() *slog.Logger { return slog.New(l) }

// Enabled accepts every level.
func (l *Log) Enabled(context.Context, slog.Level) bool { return true }

// Handle records rec.
func (l *Log) Handle(_ context.Context, rec slog.Record) error {
	r := Record{Level: rec.Level, Message: rec.Message, Attrs: make([]slog.Attr, 0, len(l.attrs)+rec.NumAttrs())}
	r.Attrs = append(r.Attrs, l.attrs...)
	rec.Attrs(func(a slog.Attr) bool {
		r.Attrs = append(r.Attrs, flatten(a)...)
		return true
	})
	l.store.mu.Lock()
	l.store.records = append(l.store.records, r)
	l.store.mu.Unlock()
	return nil
}

// flatten resolves a and replaces a group by its members.
func flatten(a slog.Attr) []slog.Attr {
	a.Value = a.Value.Resolve()
	if a.Value.Kind() != slog.KindGroup {
		return []slog.Attr{a}
	}
	var out []slog.Attr
	for _, m := range a.Value.Group() {
		out = append(out, flatten(m)...)
	}
	return out
}

// WithAttrs returns a handler that adds attrs to every record, recording
// into the same Log.
func (l *Log) WithAttrs(attrs []slog.Attr) slog.Handler {
	all := slices.Clip(l.attrs)
	for _, a := range attrs {
		all = append(all, flatten(a)...)
	}
	return &Log{store: l.store, attrs: all}
}

// WithGroup is not needed by the code under test; groups are flattened.
func (l *Log) WithGroup(string) slog.Handler { return l }

// Records returns a copy of every record so far.
func (l *Log) Records() []Record {
	l.store.mu.Lock()
	defer l.store.mu.Unlock()
	return slices.Clone(l.store.records)
}

// CountRecords returns how many records match level, msg and attrs (see
// [Record.Match]).
func (l *Log) CountRecords(level slog.Level, msg string, attrs ...any) int {
	n := 0
	for _, r := range l.Records() {
		if r.Match(level, msg, attrs...) {
			n++
		}
	}
	return n
}

// HasRecord reports whether some record matches level, msg and attrs (see
// [Record.Match]).
func (l *Log) HasRecord(level slog.Level, msg string, attrs ...any) bool {
	return l.CountRecords(level, msg, attrs...) > 0
}

// WaitForRecord polls until some record matches level, msg and attrs (see
// [Record.Match]), failing the test with the whole log after 30 s.
func (l *Log) WaitForRecord(t testing.TB, level slog.Level, msg string, attrs ...any) {
	t.Helper()
	Eventually(t, 30*time.Second, func() bool { return l.HasRecord(level, msg, attrs...) },
		"a log record %s %q %v; the log:\n%s", level, msg, attrs, logText{l})
}

// Lines returns every record so far as a line (see [Record.String]).
func (l *Log) Lines() []string {
	records := l.Records()
	lines := make([]string, len(records))
	for i, r := range records {
		lines[i] = r.String()
	}
	return lines
}

// Text returns every line so far, one per line, for failure messages.
func (l *Log) Text() string { return strings.Join(l.Lines(), "\n") }

// logText formats as every line of a Log at the time it is formatted.
type logText struct{ l *Log }

func (x logText) String() string { return x.l.Text() }

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
