package mcptest

import (
	"os"
	"strings"
)

// quickRaceExit makes the processes this test binary starts skip the race
// detector's pause at a successful exit (atexit_sleep_ms, 1000 by default):
// the suites re-execute their test binary hundreds of times as servers and
// as mcpbridge, and each exit waited a second with nothing left to check.
// A race found before the exit still fails the child (exit 66). A value the
// caller already put in GORACE wins.
func quickRaceExit() {
	opts := os.Getenv("GORACE")
	if strings.Contains(opts, "atexit_sleep_ms") {
		return
	}
	os.Setenv("GORACE", strings.TrimSpace(opts+" atexit_sleep_ms=0"))
}
