package mcptest

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Lines render records with their attributes, those of With first; groups
// are flattened.
func TestLogLines(t *testing.T) {
	l := NewLog()
	log := l.Logger().With("entry", "a")
	log.Info("hello", "n", 1)
	log.WithGroup("g").Warn("careful")
	l.Logger().Error("plain")
	want := []string{`INFO hello entry=a n=1`, `WARN careful entry=a`, `ERROR plain`}
	if diff := cmp.Diff(want, l.Lines()); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if got := l.Text(); got != strings.Join(want, "\n") {
		t.Errorf("Text = %q", got)
	}
}

// Records are matched by level, exact message and attributes, whatever
// their order, kind or source (With, the record, a group).
func TestLogRecords(t *testing.T) {
	l := NewLog()
	log := l.Logger().With("entry", "a", slog.Group("g", "server", "s"))
	log.Warn("reconnecting", "attempt", 2, "delay", 20*time.Millisecond)
	log.Error("connection lost", "err", errors.New("read: broken pipe"))
	for _, tt := range []struct {
		level slog.Level
		msg   string
		attrs []any
		want  bool
	}{
		{slog.LevelWarn, "reconnecting", nil, true},
		{slog.LevelWarn, "reconnecting", []any{"delay", "20ms", "attempt", 2, "entry", "a", "server", "s"}, true},
		{slog.LevelWarn, "reconnecting", []any{"attempt", 3}, false},
		{slog.LevelWarn, "reconnecting", []any{"missing", ""}, false},
		{slog.LevelWarn, "reconnecting", []any{"missing", Absent, "attempt", 2}, true},
		{slog.LevelWarn, "reconnecting", []any{"attempt", Absent}, false},
		{slog.LevelInfo, "reconnecting", nil, false},
		{slog.LevelWarn, "reconnect", nil, false}, // the whole message
		{slog.LevelError, "connection lost", []any{"err", "read: broken pipe"}, true},
		{slog.LevelError, "connection lost", []any{"err", Contains("broken", "pipe")}, true},
		{slog.LevelError, "connection lost", []any{"err", Contains("reset")}, false},
	} {
		if got := l.HasRecord(tt.level, tt.msg, tt.attrs...); got != tt.want {
			t.Errorf("HasRecord(%s, %q, %v) = %v, want %v; log:\n%s", tt.level, tt.msg, tt.attrs, got, tt.want, l.Text())
		}
	}
	if n := l.CountRecords(slog.LevelWarn, "reconnecting", "entry", "a"); n != 1 {
		t.Errorf("CountRecords = %d", n)
	}
	if got, want := l.Lines()[0], "WARN reconnecting entry=a server=s attempt=2 delay=20ms"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	l.WaitForRecord(t, slog.LevelError, "connection lost", "entry", "a")
}
