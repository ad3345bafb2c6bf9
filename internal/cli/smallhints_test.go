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

// A missing file that $MCPBRIDGE_CONFIG names is said to be named there,
// since nothing on the command line names it.
func TestMissingConfigNamesTheVariable(t *testing.T) {
	r := mcpbridgeWith(t, func(io *IO) {
		lookup := io.LookupEnv
		io.LookupEnv = func(k string) (string, bool) {
			if k == "MCPBRIDGE_CONFIG" {
				return "/nope.yaml", true
			}
			return lookup(k)
		}
	}, "", "tools")
	want := "config file /nope.yaml, named by $MCPBRIDGE_CONFIG, does not exist: correct the variable, or unset it to read the user and project configs (or, with none, the embedded demo)"
	if r.code != ExitUsage || !strings.Contains(r.stderr, want) {
		t.Errorf("tools: want %q in %+v", want, r)
	}
}
