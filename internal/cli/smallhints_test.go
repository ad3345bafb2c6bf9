package cli

import (
	"strings"
	"testing"
)

// A command typed short of its name (demo for demo-server) gets a
// did-you-mean, as a misspelt one does.
func TestTruncatedCommandDidYouMean(t *testing.T) {
	r := mcpbridge(t, "", "demo")
	want := `unknown command "demo": did you mean "demo-server"?`
	if r.code != ExitUsage || !strings.Contains(r.stderr, want) {
		t.Errorf("demo: want %q in %+v", want, r)
	}
}
