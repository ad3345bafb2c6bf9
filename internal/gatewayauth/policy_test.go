package gatewayauth

import (
	"bufio"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gopkg.in/yaml.v3"
)

// compilePolicy compiles the policy of a gateway config written in YAML.
func compilePolicy(t *testing.T, src string) *Policy {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		t.Fatal(err)
	}
	cfg, err := Decode(n.Content[0], nil)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	p, err := NewPolicy(cfg.Policy, cfg.HasPolicy)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// lineOf is the 1-based line of src holding marker, as the decoder
// numbers it.
func lineOf(t *testing.T, src, marker string) int {
	t.Helper()
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, marker) {
			return i + 1
		}
	}
	t.Fatalf("no line holds %q", marker)
	return 0
}

type ask struct {
	who  *Principal
	kind Target
	name string
}

func (a ask) String() string {
	return fmt.Sprintf("%s %s %q", a.who.Name, [...]string{"tool", "prompt", "resource"}[a.kind], a.name)
}

var (
	alice   = &Principal{Name: "alice"}
	bob     = &Principal{Name: "bob", Groups: []string{"readers"}}
	goldBob = &Principal{Name: "bob", Groups: []string{"readers"}, Claims: map[string]any{"tier": "gold"}}
)

// A deny refuses what allow grants, wherever its rule stands: before the
// allowing rule, after it, or in it; a deny-only rule never decides, so
// the rules after it still grant; a deny over a server's every name
// covers its prompts and resources too.
func TestDenyBeatsAllow(t *testing.T) {
	const src = `policy:
  - deny: ["mcp__github__delete_*"]          # first, for everyone
  - subjects: [alice]
    allow: ["*"]
    deny: ["mcp__secret__*"]                 # in alice's own rule
  - groups: [readers]
    allow: ["*"]
  - when: 'claims.tier != "gold"'
    deny: ["mcp__docs__summarize"]           # last; a token without tier is denied too
`
	p := compilePolicy(t, src)
	first, own, last := lineOf(t, src, "# first"), lineOf(t, src, "allow: [\"*\"]")-1, lineOf(t, src, "when:")
	for _, c := range []struct {
		ask
		want Decision
	}{
		{ask{alice, Tool, "mcp__github__get_issue"}, Decision{Allow: true, Line: own}},
		{ask{alice, Tool, "mcp__github__delete_repo"}, Decision{Line: first, Denied: true}},
		{ask{bob, Tool, "mcp__github__delete_repo"}, Decision{Line: first, Denied: true}},
		{ask{alice, Tool, "mcp__secret__leak"}, Decision{Line: own, Denied: true}},
		{ask{alice, Prompt, "mcp__secret__summarize"}, Decision{Line: own, Denied: true}},
		{ask{alice, Resource, "secret"}, Decision{Line: own, Denied: true}},
		{ask{bob, Resource, "secret"}, Decision{Allow: true, Line: own + 3}},
		// The CEL deny: a token without the claim it tests is denied.
		{ask{bob, Prompt, "mcp__docs__summarize"}, Decision{Line: last, Denied: true}},
		{ask{goldBob, Prompt, "mcp__docs__summarize"}, Decision{Allow: true, Line: own + 3}},
		{ask{bob, Tool, "mcp__docs__summarize"}, Decision{Line: last, Denied: true}},
		// A deny of one prompt leaves the server's resources alone.
		{ask{bob, Resource, "docs"}, Decision{Allow: true, Line: own + 3}},
		{ask{&Principal{Name: "mallory"}, Tool, "mcp__time__now"}, Decision{}},
	} {
		if got := p.Decide(c.who, c.kind, c.name); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.ask, got, c.want)
		}
	}
}

// A when over tool sees a resource read as its server's public prefix,
// mcp__SERVER__, the start of every name of the server: a deny written
// over a server's tools by when denies its resources too. It used to see
// the bare server name, so the deny below let bob read (and list)
// secret's resources while it hid secret's tools from him.
func TestWhenSeesAResourcesServerPrefix(t *testing.T) {
	src := `policy:
  - when: 'tool.startsWith("mcp__secret__") && !("secops" in groups)'
    deny: ["*"]
  - allow: ["*"]
`
	p := compilePolicy(t, src)
	deny, grant := lineOf(t, src, "when:"), lineOf(t, src, "- allow:")
	secops := &Principal{Name: "sam", Groups: []string{"secops"}}
	for _, c := range []struct {
		ask
		want Decision
	}{
		{ask{bob, Tool, "mcp__secret__get"}, Decision{Line: deny, Denied: true}},
		{ask{bob, Resource, "secret"}, Decision{Line: deny, Denied: true}},
		{ask{bob, Resource, "docs"}, Decision{Allow: true, Line: grant}},
		{ask{secops, Resource, "secret"}, Decision{Allow: true, Line: grant}},
		{ask{secops, Tool, "mcp__secret__get"}, Decision{Allow: true, Line: grant}},
	} {
		if got := p.Decide(c.who, c.kind, c.name); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.ask, got, c.want)
		}
	}
}

// Prompts and resources follow allow unless the rule lists its own: a
// glob over every name of a server covers its resources, one over some
// of its tools does not; an empty list grants none.
func TestPromptsAndResourcesFollowAllow(t *testing.T) {
	p := compilePolicy(t, `policy:
  - subjects: [alice]
    allow: ["*"]
  - subjects: [bob]
    allow: ["mcp__docs__*", "mcp__github__get_*"]
  - subjects: [carol]
    allow: ["*"]
    prompts: []
    resources: [files]
  - subjects: [dave]
    allow: ["mcp__doc*"]
    prompts: ["mcp__time__*"]
`)
	carol, dave := &Principal{Name: "carol"}, &Principal{Name: "dave"}
	for _, c := range []struct {
		ask
		want bool
	}{
		{ask{alice, Resource, "docs"}, true},
		{ask{alice, Resource, "any-server_2"}, true},
		{ask{alice, Prompt, "mcp__docs__summarize"}, true},
		{ask{bob, Resource, "docs"}, true},
		{ask{bob, Resource, "github"}, false},
		{ask{bob, Resource, "docsearch"}, false},
		{ask{bob, Prompt, "mcp__docs__summarize"}, true},
		{ask{bob, Prompt, "mcp__github__get_started"}, true},
		{ask{bob, Prompt, "mcp__time__now"}, false},
		{ask{carol, Tool, "mcp__time__now"}, true},
		{ask{carol, Prompt, "mcp__docs__summarize"}, false},
		{ask{carol, Resource, "docs"}, false},
		{ask{carol, Resource, "files"}, true},
		{ask{dave, Resource, "docs"}, true},
		{ask{dave, Resource, "doctor"}, true},
		{ask{dave, Resource, "time"}, false},
		{ask{dave, Prompt, "mcp__docs__summarize"}, false},
		{ask{dave, Prompt, "mcp__time__greet"}, true},
	} {
		if got := p.Decide(c.who, c.kind, c.name).Allow; got != c.want {
			t.Errorf("%s: allowed %v, want %v", c.ask, got, c.want)
		}
	}
}

// A glob covers a server's resources only when it matches every public
// name of the server, not some of them nor another server's.
func TestCoversServer(t *testing.T) {
	for _, c := range []struct {
		glob, server string
		want         bool
	}{
		{"*", "docs", true},
		{"mcp__*", "docs", true},
		{"mcp__docs__*", "docs", true},
		{"mcp__do?s__*", "docs", true},
		{"mcp__docs_*", "docs", true},
		{"mcp__docs__get_*", "docs", false},
		{"mcp__docs__", "docs", false},
		{"mcp__docs", "docs", false},
		{"docs", "docs", false},
		{"mcp__doc*", "docs", true},
		{"mcp__docs__*", "docsearch", false},
		{"*__summarize", "docs", false},
	} {
		if got := coversServer(c.glob, c.server); got != c.want {
			t.Errorf("coversServer(%q, %q) = %v, want %v", c.glob, c.server, got, c.want)
		}
	}
}

// Over real HTTP, as a caller would probe it: a denied tool is neither
// listed nor callable though allow is "*", a denied prompt and a denied
// server's resource are neither listed nor served, none of it reaches a
// backend, and each refusal's audit line names the deny rule's line.
func TestDenyOverTheWire(t *testing.T) {
	s := newServed(t, Options{})
	publish(t, s.reg, "docs")
	publish(t, s.reg, "secret")
	const src = `
auth: {issuer: ISSUER, audience: RESOURCE}
policy:
  - subjects: [alice]
    allow: ["*"]
  - deny: ["mcp__github__delete_*", "mcp__docs__summarize"]
  - subjects: [alice]
    deny: ["mcp__secret__*"]
audit: {file: DIR/audit.jsonl}
`
	s.apply(t, src, nil)
	alice := s.connect(t, s.is.Sign(t, s.is.Claims("alice", s.resource(), nil)), nil)
	if d := cmp.Diff([]string{"mcp__github__get_issue", "mcp__time__now"}, toolNames(t, alice)); d != "" {
		t.Errorf("alice's tools (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"docs://a"}, offerNames(t, alice)); d != "" {
		t.Errorf("alice's prompts and resources (-want +got):\n%s", d)
	}
	checkHidden(t, alice, "mcp__github__delete_repo")
	checkOffersHidden(t, alice, "mcp__docs__summarize", "secret://a")
	if n := s.ran["mcp__github__delete_repo"].Load(); n != 0 {
		t.Errorf("the denied tool ran %d times", n)
	}
	everyone, hers := lineOf(t, src, "delete_*"), lineOf(t, src, "mcp__secret__*")-1
	var reasons []string
	for sc := bufio.NewScanner(strings.NewReader(readFile(t, auditPath(s)))); sc.Scan(); {
		var l struct{ Name, Outcome, Reason string }
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		reasons = append(reasons, l.Name+" "+l.Outcome+": "+l.Reason)
	}
	want := []string{
		fmt.Sprintf("mcp__github__delete_repo denied: policy rule at line %d denies mcp__github__delete_repo", everyone),
		fmt.Sprintf("mcp__docs__summarize denied: policy rule at line %d denies mcp__docs__summarize", everyone),
		fmt.Sprintf("secret://a denied: policy rule at line %d denies the resources of server secret", hers),
	}
	if d := cmp.Diff(want, reasons, cmpopts.SortSlices(func(a, b string) bool { return a < b })); d != "" {
		t.Errorf("audit lines (-want +got):\n%s", d)
	}
}

// What a policy hides from whole classes of callers without a list
// saying so is a warning naming the rule, its callers and the fix; what
// a list says (resources: []) is not.
func TestPolicyWarnings(t *testing.T) {
	const src = `policy:
  - groups: [readers]
    allow: ["mcp__github__get_*", search_tools]
  - subjects: [alice]
    allow: ["*"]
  - subjects: [bob]
    allow: ["mcp__docs__*"]
  - subjects: [carol]
    allow: [search_tools]
    resources: []
  - subjects: [mallory]
    allow: []
  - subjects: [eve, ed]
    deny: ["*"]
  - when: 'claims.tier == "free"'
    deny: ["mcp__*"]
  - deny: ["mcp__secret__*", "mcp__*__delete_*"]
`
	got := compilePolicy(t, src).Warnings(Reach{Builtin: []string{"search_tools"}})
	noResource := "grants tools but no resource"
	want := []Warning{
		{Line: lineOf(t, src, "readers"), Callers: "groups readers", Msg: noResource},
		{Line: lineOf(t, src, "eve"), Callers: "subjects eve, ed", Msg: "denies every tool, prompt and resource of every server"},
		{Line: lineOf(t, src, "when"), Callers: `when claims.tier == "free"`, Msg: "denies every tool, prompt and resource of every server"},
	}
	trim := cmp.Transformer("msg", func(w Warning) Warning {
		if strings.HasPrefix(w.Msg, noResource) {
			w.Msg = noResource
		}
		return w
	})
	if d := cmp.Diff(want, got, trim); d != "" {
		t.Errorf("warnings (-want +got):\n%s", d)
	}
	if len(got) > 0 && !strings.Contains(got[0].Msg, "resources:") {
		t.Errorf("the warning %q does not say how to grant resources", got[0].Msg)
	}
}

// Where any subject may call (an issuer's tokens name their own), a
// when is warned of only when it is false whatever the caller and tool:
// a claim or subject it tests may be a token's. Where the callers are
// known and carry no claims, it is warned of when none of them meets it
// (the rule's subjects among them), but not twice over a warning of
// subjects or groups no caller has.
func TestPolicyWhenNeverHoldsWarnings(t *testing.T) {
	const src = `policy:
  - when: 'subject == "alice" && false'
    allow: ["*"]
  - when: 'subject == "alice"'
    allow: ["*"]
  - when: 'claims.role == "admin"'
    allow: ["*"]
  - when: 'size(groups) > 0 && tool.endsWith("_x")'
    allow: ["*"]
  - subjects: [ci, bob]
    when: 'subject == "bob"'
    allow: ["*"]
  - subjects: [bob]
    when: 'subject == "bob"'
    allow: ["*"]
  - when: '!has(claims.role)'
    allow: ["*"]
`
	p := compilePolicy(t, src)
	never := func(what string) Warning {
		return Warning{Line: lineOf(t, src, "'"+what+"'"), Callers: "when " + what, Msg: "never applies: its when is false whatever the caller and tool"}
	}
	if d := cmp.Diff([]Warning{never(`subject == "alice" && false`)}, p.Warnings(Reach{})); d != "" {
		t.Errorf("any caller: warnings (-want +got):\n%s", d)
	}
	const noneMsg = "never applies: its when holds for none of the callers here (ci, none of whom has claims or groups: only a JWT carries them, with auth.issuer)"
	none := func(what string) Warning {
		return Warning{Line: lineOf(t, src, "'"+what+"'"), Callers: "when " + what, Msg: noneMsg}
	}
	got := p.Warnings(Reach{Subjects: []string{"ci"}, NoGroups: true})
	want := []Warning{never(`subject == "alice" && false`), none(`subject == "alice"`), none(`claims.role == "admin"`), none(`size(groups) > 0 && tool.endsWith("_x")`)}
	want = append(want, Warning{Line: lineOf(t, src, "[ci, bob]"), Callers: `subjects ci, bob; when subject == "bob"`, Msg: noneMsg})
	subjectsLine := lineOf(t, src, "subjects: [bob]")
	var subjects []Warning
	got = slices.DeleteFunc(got, func(w Warning) bool {
		if w.Line == subjectsLine {
			subjects = append(subjects, w)
			return true
		}
		return false
	})
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("callers ci: warnings (-want +got):\n%s", d)
	}
	if len(subjects) != 1 || !strings.Contains(subjects[0].Msg, "no caller here has any of its subjects") {
		t.Errorf("the rule of bob alone: %+v, want only the warning of its subjects", subjects)
	}
}

// The example gateway entry of docs/operations.md §9 is valid and means
// what its comments say.
func TestOperationsPolicyExample(t *testing.T) {
	doc := readFile(t, "../../docs/operations.md")
	_, section, _ := strings.Cut(doc, "## 9. Who is calling")
	_, block, _ := strings.Cut(section, "```yaml\n")
	block, _, _ = strings.Cut(block, "```")
	cfg, err := decodeEntry(t, block, func(k string) (string, bool) { return "ci-token", k == "CI_GATEWAY_TOKEN" })
	if err != nil {
		t.Fatalf("the example does not decode: %v", err)
	}
	p, err := NewPolicy(cfg.Policy, cfg.HasPolicy)
	if err != nil {
		t.Fatal(err)
	}
	reader := &Principal{Name: "rita", Groups: []string{"readers"}}
	for _, c := range []struct {
		ask
		want bool
	}{
		{ask{alice, Tool, "mcp__github__delete_repo"}, false},
		{ask{alice, Tool, "mcp__time__now"}, true},
		{ask{alice, Prompt, "mcp__docs__summarize"}, true},
		{ask{alice, Resource, "github"}, true},
		{ask{reader, Tool, "mcp__github__get_issue"}, true},
		{ask{reader, Tool, "search_tools"}, true},
		{ask{reader, Resource, "docs"}, true},
		{ask{reader, Resource, "github"}, false},
		{ask{reader, Prompt, "mcp__github__get_started"}, false},
	} {
		if got := p.Decide(c.who, c.kind, c.name).Allow; got != c.want {
			t.Errorf("%s: allowed %v, want %v", c.ask, got, c.want)
		}
	}
}

// A rule's subjects or groups given with no names (an empty list, or the
// key with no value, as a template that filled in nothing leaves it) is
// refused where it stands: read as no condition, as it was, it made an
// allow-all rule every caller's. A rule built with an empty list (not
// decoded) matches no one.
func TestEmptyCallerListRefused(t *testing.T) {
	for _, c := range []struct{ rule, path string }{
		{`{subjects: [], allow: ["*"]}`, "policy[1].subjects"},
		{`{subjects: ~, allow: ["*"]}`, "policy[1].subjects"},
		{`{subjects: null, allow: ["*"]}`, "policy[1].subjects"},
		{`{groups: [], allow: ["*"]}`, "policy[1].groups"},
		{`{groups: , allow: ["*"]}`, "policy[1].groups"},
	} {
		file := "- id: gw\n  name: gateway\n  config:\n    policy:\n      - {subjects: [alice], allow: [\"*\"]}\n      - " + c.rule + "\n"
		_, err := decodeEntry(t, file, nil)
		if err == nil || !strings.HasPrefix(err.Error(), "6:") || !containsAll(err.Error(), c.path, "names no one", "remove the key") {
			t.Errorf("%s: %v, want an error at line 6 naming %s and saying to remove the key", c.rule, err, c.path)
		}
	}
	p, err := NewPolicy([]Rule{{Subjects: []string{}, Allow: []string{"*"}}, {Groups: []string{}, Allow: []string{"*"}}}, true)
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Decide(&Principal{Name: "mallory"}, Tool, "mcp__time__now"); d.Allow {
		t.Errorf("a rule of no subjects or groups grants mallory: %+v", d)
	}
}

// A denial's audit reason says which rule decided and why: the first rule
// that grants and applies to the caller, though it is about another tool
// (first match), and what it does not allow; or that no rule grants the
// caller anything. It named only the line, which read as pointing at an
// unrelated rule.
func TestDenialReasonSaysWhichRuleDecided(t *testing.T) {
	s := newServed(t, Options{})
	const src = `
auth: {issuer: ISSUER, audience: RESOURCE}
policy:
  - when: '"readonly" in scopes'
    allow: [mcp__time__now]
  - subjects: [carol]
    allow: ["mcp__github__*"]
audit: {file: DIR/audit.jsonl}
`
	s.apply(t, src, nil)
	carol := s.connect(t, s.is.Sign(t, s.is.Claims("carol", s.resource(), jwt.MapClaims{"scope": "readonly"})), nil)
	checkHidden(t, carol, "mcp__github__get_issue")
	mallory := s.connect(t, s.is.Sign(t, s.is.Claims("mallory", s.resource(), nil)), nil)
	checkHidden(t, mallory, "mcp__time__now")
	var reasons []string
	for sc := bufio.NewScanner(strings.NewReader(readFile(t, auditPath(s)))); sc.Scan(); {
		var l struct{ Identity, Outcome, Reason string }
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if l.Outcome == "denied" {
			reasons = append(reasons, l.Identity+": "+l.Reason)
		}
	}
	want := []string{
		fmt.Sprintf("carol: policy rule at line %d (the first rule that grants and applies to this caller) does not allow mcp__github__get_issue", lineOf(t, src, "readonly")),
		"mallory: no policy rule that grants applies to this caller, so it may use nothing (mcp__time__now)",
	}
	if d := cmp.Diff(want, reasons, cmpopts.SortSlices(func(a, b string) bool { return a < b })); d != "" {
		t.Errorf("denials' audit reasons (-want +got):\n%s", d)
	}
}

// The operations guide's policy, served over HTTP, grants its scope rule
// to a token that holds the scope it names, and to no token whose scopes
// merely spell that name inside another ("nonadmin", "admin:read"): one
// such token would otherwise call every time tool an admin may.
func TestOperationsPolicyScopeIsWhole(t *testing.T) {
	_, section, _ := strings.Cut(readFile(t, "../../docs/operations.md"), "## 9. Who is calling")
	_, block, _ := strings.Cut(section, "\n    policy:")
	block, _, _ = strings.Cut(block, "\n    rateLimit:")
	s := newServed(t, Options{})
	s.apply(t, "auth: {issuer: ISSUER, audience: RESOURCE}\npolicy:"+strings.ReplaceAll(block, "\n    ", "\n"), nil)
	for _, c := range []struct {
		claims jwt.MapClaims
		want   []string
	}{
		{jwt.MapClaims{"scope": "read admin"}, []string{"mcp__time__now"}},
		{jwt.MapClaims{"scp": "admin"}, []string{"mcp__time__now"}},
		{jwt.MapClaims{"scope": "read nonadmin"}, nil},
		{jwt.MapClaims{"scope": "admin:read"}, nil},
		{jwt.MapClaims{"scp": []any{"sysadmins"}}, nil},
	} {
		cs := s.connect(t, s.is.Sign(t, s.is.Claims("dana", s.resource(), c.claims)), nil)
		if d := cmp.Diff(c.want, toolNames(t, cs)); d != "" {
			t.Errorf("a token with %v lists (-want +got):\n%s", c.claims, d)
		}
		if c.want == nil {
			checkHidden(t, cs, "mcp__time__now")
		}
	}
	if n := s.ran["mcp__time__now"].Load(); n != 0 {
		t.Errorf("mcp__time__now ran %d times for tokens without the admin scope", n)
	}
}
