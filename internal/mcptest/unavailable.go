package mcptest

import (
	"os"
	"testing"
)

// Unavailable ends a test that needs something this machine lacks: it
// fails when the CI environment variable is set (CI must run it) and is
// skipped otherwise, with msg saying what is missing.
func Unavailable(t testing.TB, msg string) {
	t.Helper()
	if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
		t.Fatalf("%s (fatal because CI=%s)", msg, ci)
	}
	t.Skip(msg)
}
