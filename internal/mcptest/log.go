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

// Log is a slog handler that keeps every record as one line,
// "LEVEL message key=value…" (attributes from With first), so tests can
// check exact log texts and the tags a logger carries. Safe for concurrent
// use. Build one with NewLog.
type Log struct {
	store *logStore
	attrs []slog.Attr
}

type logStore struct {
	mu    sync.Mutex
	lines []string
}

// NewLog returns an empty Log.
func NewLog() *Log { return &Log{store: &logStore{}} }

// Logger returns a logger that writes to l at every level.
func (l *Log) Logger() *slog.Logger { return slog.New(l) }

// Enabled accepts every level.
func (l *Log) Enabled(context.Context, slog.Level) bool { return true }

// Handle records rec.
func (l *Log) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Level.String() + " " + rec.Message)
	write := func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	}
	for _, a := range l.attrs {
		write(a)
	}
	rec.Attrs(write)
	l.store.mu.Lock()
	l.store.lines = append(l.store.lines, b.String())
	l.store.mu.Unlock()
	return nil
}

// WithAttrs returns a handler that adds attrs to every line, recording
// into the same Log.
func (l *Log) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &Log{store: l.store, attrs: append(slices.Clip(l.attrs), attrs...)}
}

// WithGroup is not needed by the code under test; groups are flattened.
func (l *Log) WithGroup(string) slog.Handler { return l }

// Lines returns a copy of every line so far.
func (l *Log) Lines() []string {
	l.store.mu.Lock()
	defer l.store.mu.Unlock()
	return slices.Clone(l.store.lines)
}

// Count returns how many lines contain every one of parts.
func (l *Log) Count(parts ...string) int {
	n := 0
	for _, line := range l.Lines() {
		if containsAll(line, parts) {
			n++
		}
	}
	return n
}

// Has reports whether some line contains every one of parts.
func (l *Log) Has(parts ...string) bool { return l.Count(parts...) > 0 }

// WaitFor polls until some line contains every one of parts, failing the
// test with the whole log after 30 s.
func (l *Log) WaitFor(t testing.TB, parts ...string) {
	t.Helper()
	Eventually(t, 30*time.Second, func() bool { return l.Has(parts...) }, "a log line with %q; the log:\n%s", parts, logText{l})
}

// logText formats as every line of a Log at the time it is formatted.
type logText struct{ l *Log }

func (x logText) String() string { return strings.Join(x.l.Lines(), "\n") }

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
