package sandbox

import (
	"bytes"
	"strings"
	"testing"
)

// A re-execution with a broken command line says what is wrong and exits
// ExitSetup before it confines anything (these cases never reach the
// kernel, so they are safe to run in the test process).
func TestRunBadCommandLine(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"too few arguments", []string{"{}"}, "want PLAN PATH ARGV0 [ARGS...], got 1 arguments"},
		{"a plan that is not JSON", []string{"{", "/bin/true", "true"}, "decoding the plan: unexpected end of JSON input"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := run(tt.args, &stderr); code != ExitSetup {
				t.Errorf("exit %d, want %d", code, ExitSetup)
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr %q does not say %q", stderr.String(), tt.want)
			}
		})
	}
}
