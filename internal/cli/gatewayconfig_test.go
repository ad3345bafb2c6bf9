package cli

import (
	"strings"
	"testing"
)

// A policy rule that neither allows nor denies is a positioned config
// error: a stray "-" that splits one rule in two (subjects on one, allow
// on the next) gave alice nothing and everyone else everything, and
// validate said OK.
func TestValidatePolicyRuleThatDecidesNothing(t *testing.T) {
	inDir(t, `- id: gw
  name: gateway
  config:
    policy:
      - subjects: [alice]
      - allow: ["*"]
`)
	r := mcpbridge(t, "", "validate")
	if r.code != ExitUsage {
		t.Fatalf("validate exited %d, want %d:\n%s%s", r.code, ExitUsage, r.stdout, r.stderr)
	}
	for _, w := range []string{"mcpbridge.yaml:5:", "config.policy[0]", "neither allows nor denies", "allow, prompts, resources or deny", "allow: []"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
	// A rule that grants nothing, written so, stays valid.
	inDir(t, "- id: gw\n  name: gateway\n  config:\n    policy: [{subjects: [alice], allow: []}, {allow: [\"*\"]}]\n")
	if r := mcpbridge(t, "", "validate"); r.code != ExitOK {
		t.Errorf("allow: [] refused: %d\n%s", r.code, r.stderr)
	}
}
