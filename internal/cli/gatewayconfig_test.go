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

// Commands other than serve do not fail on a gateway entry's variables,
// which only serve uses and which the serve host alone may hold: tools
// and status exit 0, and validate notes the unset ones. serve still
// refuses to start without them. tools and status exited 1 saying the
// gateway entry failed.
func TestGatewayEntryVariablesOnlyServeNeeds(t *testing.T) {
	cfg := writeConfig(t, fixtureEntries(t, "fx")+`- id: gw
  name: gateway
  config:
    auth: {tokens: {alice: GW_UNSET_ALICE}}
    policy: [{subjects: [alice], allow: ["*"]}]
    store:
      redis: {url: "redis://:${GW_UNSET_PASSWORD}@redis:6379"}
      advertise: "http://${GW_UNSET_POD_IP}:8080"
`)
	for _, cmd := range []string{"tools", "status"} {
		if r := mcpbridge(t, "", cmd, "--config", cfg); r.code != ExitOK || strings.Contains(r.stderr, "gateway") {
			t.Errorf("%s: exit %d, want 0 and nothing about the gateway entry:\n%s", cmd, r.code, r.stderr)
		}
	}
	r := mcpbridge(t, "", "validate", "--config", cfg)
	if r.code != ExitOK || !strings.Contains(r.stdout, "variables unset here, which serve needs: GW_UNSET_ALICE, GW_UNSET_PASSWORD, GW_UNSET_POD_IP") {
		t.Errorf("validate: exit %d, want 0 noting the unset variables:\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = mcpbridge(t, "", "serve", "--stdio", "--config", cfg)
	if r.code != ExitUsage || !strings.Contains(r.stderr, "the variable GW_UNSET_ALICE is unset or empty") {
		t.Errorf("serve: exit %d, want %d naming the unset variable:\n%s", r.code, ExitUsage, r.stderr)
	}
}

// A rule whose when holds for no caller is warned of at its line, as
// a rule whose subjects or groups no caller has is: one that tests a
// subject no caller here has, a claim or a group where no caller has any
// (no issuer), or that is false whatever the caller and tool. validate
// said nothing of them, while their callers got nothing from them. A
// when some caller meets, and a deny's when that fails for lack of a
// claim (the deny then applies), are not warned of.
func TestPolicyWhenThatCanNeverHoldIsWarnedOf(t *testing.T) {
	inDir(t, `- id: gw
  name: gateway
  config:
    policy:
      - when: 'subject == "alice"'
        allow: ["*"]
      - when: 'claims.role == "admin"'
        allow: ["*"]
      - when: '"ops" in groups'
        allow: ["*"]
      - when: 'tool.startsWith("mcp__fx__") && 1 > 2'
        deny: ["mcp__fx__*"]
      - when: 'subject == "stdio" || tool == "mcp__fx__add"'
        allow: ["*"]
      - when: 'claims.role != "admin"'
        deny: ["mcp__fx__*"]
`)
	r := mcpbridge(t, "", "validate")
	if r.code != ExitOK {
		t.Fatalf("validate: exit %d, want 0 (warnings only):\n%s", r.code, r.stderr)
	}
	const none = "never applies: its when holds for none of the callers here (stdio, bearer, anonymous, none of whom has claims or groups: only a JWT carries them, with auth.issuer)"
	for _, w := range []string{
		`mcpbridge.yaml:5: warning: entry "gw": policy rule (when subject == "alice"): ` + none,
		`mcpbridge.yaml:7: warning: entry "gw": policy rule (when claims.role == "admin"): ` + none,
		`mcpbridge.yaml:9: warning: entry "gw": policy rule (when "ops" in groups): ` + none,
		`mcpbridge.yaml:11: warning: entry "gw": policy rule (when tool.startsWith("mcp__fx__") && 1 > 2): never applies: its when is false whatever the caller and tool`,
	} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("validate's stderr lacks %q:\n%s", w, r.stderr)
		}
	}
	for _, fine := range []string{"mcpbridge.yaml:13:", "mcpbridge.yaml:15:"} {
		if strings.Contains(r.stderr, fine) {
			t.Errorf("validate warned of the rule at %s, which applies:\n%s", fine, r.stderr)
		}
	}
}

// A policy rule that can never match is warned of, at its line, by
// validate and by serve as it takes the policy into use: subjects or
// groups no caller can have (no identities configured; serve --stdio,
// whose caller is "stdio"), and a glob that matches no public name (a raw
// name, as one writes under --raw-names). validate said OK, and serve
// nothing, while the rules' callers got empty lists.
func TestPolicyThatCanNeverMatchIsWarnedOf(t *testing.T) {
	inDir(t, `- id: gw
  name: gateway
  config:
    policy:
      - subjects: [alice]
        allow: ["*"]
      - groups: [ops]
        allow: ["*"]
      - allow: [echo, "mcp__fx__*", search_tools, "*add"]
`)
	r := mcpbridge(t, "", "validate")
	if r.code != ExitOK {
		t.Fatalf("validate: exit %d, want 0 (warnings only):\n%s", r.code, r.stderr)
	}
	for _, w := range []string{
		`mcpbridge.yaml:5: warning: entry "gw": policy rule (subjects alice): never applies: no caller here has any of its subjects; the callers are stdio, bearer, anonymous`,
		`mcpbridge.yaml:7: warning: entry "gw": policy rule (groups ops): never applies: no caller here has groups`,
		`mcpbridge.yaml:9: warning: entry "gw": policy rule (every caller): allow: "echo" matches no name: policies match public names, mcp__SERVER__NAME (under --raw-names too); write "mcp__SERVER__echo"`,
	} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("validate's stderr lacks %q:\n%s", w, r.stderr)
		}
	}
	for _, fine := range []string{`"mcp__fx__*"`, `"search_tools"`, `"*add"`} {
		if strings.Contains(r.stderr, fine) {
			t.Errorf("validate warned of %s, which may match:\n%s", fine, r.stderr)
		}
	}

	t.Setenv("GW_WARN_ALICE", "alice-secret")
	cfg := writeConfig(t, fixtureEntries(t, "fx")+"- id: gw\n  name: gateway\n  config:\n    auth: {tokens: {alice: GW_WARN_ALICE}}\n    policy: [{subjects: [alice], allow: [\"*\"]}]\n")
	if r := mcpbridge(t, "", "validate", "--config", cfg); r.code != ExitOK || strings.Contains(r.stderr, "never applies") {
		t.Errorf("validate of a rule alice's token meets over HTTP: %d\n%s", r.code, r.stderr)
	}
	r = mcpbridge(t, stdioCall, "serve", "--stdio", "--config", cfg)
	if !strings.Contains(r.stderr, `level=WARN msg="gateway policy: never applies: no caller here has any of its subjects; the callers are stdio`) || !strings.Contains(r.stderr, "line=") {
		t.Errorf("serve --stdio did not warn that alice's rule never applies to its caller, stdio:\n%s", r.stderr)
	}
}
