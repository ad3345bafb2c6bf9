package mcptest

import (
	"os"
	"testing"
)

func TestQuickRaceExit(t *testing.T) {
	for _, c := range []struct{ before, after string }{
		{"", "atexit_sleep_ms=0"},
		{"halt_on_error=1", "halt_on_error=1 atexit_sleep_ms=0"},
		{"atexit_sleep_ms=250 log_path=/tmp/r", "atexit_sleep_ms=250 log_path=/tmp/r"},
	} {
		t.Setenv("GORACE", c.before)
		quickRaceExit()
		if got := os.Getenv("GORACE"); got != c.after {
			t.Errorf("GORACE %q: became %q, want %q", c.before, got, c.after)
		}
	}
}
