package gatewayauth

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/audit"
	"github.com/mcpbridge/mcpbridge/toolview"
)

const policyConfig = `
auth:
  issuer: ISSUER
  audience: RESOURCE
  tokens: {ci: CI_TOKEN}
policy:
  - subjects: [alice]
    allow: ["*"]
  - groups: [readers]
    allow: ["mcp__github__get_*", "mcp__github__list_*"]
  - when: '"admin" in scopes && tool.startsWith("mcp__time__")'
    allow: ["*"]
  - subjects: [ci]
    allow: ["mcp__time__*"]
audit: {file: DIR/audit.jsonl, args: keys}
`

// Two identities, each by its own signing algorithm, see different tool
// lists and can call only what the policy allows; a denied call never
// reaches the tool, and every call and denial is in a verified audit trail.
func TestIdentitiesSeeAndCallWhatPolicyAllows(t *testing.T) {
	s := newServed(t, Options{})
	s.apply(t, policyConfig, map[string]string{"CI_TOKEN": "ci-secret-token"})
	aud := s.resource()
	alice := s.connect(t, s.is.Sign(t, s.is.Claims("alice", aud, nil)), nil)
	bob := s.connect(t, s.is.SignEC(t, s.is.Claims("bob", aud, jwt.MapClaims{"groups": []string{"readers"}})), nil)
	admin := s.connect(t, s.is.Sign(t, s.is.Claims("dana", aud, jwt.MapClaims{"scope": "read admin"})), nil)
	ci := s.connect(t, "ci-secret-token", nil)
	nobody := s.connect(t, s.is.Sign(t, s.is.Claims("mallory", aud, nil)), nil)

	all := []string{"mcp__github__delete_repo", "mcp__github__get_issue", "mcp__time__now"}
	for _, c := range []struct {
		name string
		got  []string
		want []string
	}{
		{"alice", toolNames(t, alice), all},
		{"bob", toolNames(t, bob), []string{"mcp__github__get_issue"}},
		{"admin by CEL", toolNames(t, admin), []string{"mcp__time__now"}},
		{"static token ci", toolNames(t, ci), []string{"mcp__time__now"}},
		{"no rule", toolNames(t, nobody), nil},
	} {
		if d := cmp.Diff(c.want, c.got); d != "" {
			t.Errorf("%s's tools/list (-want +got):\n%s", c.name, d)
		}
	}

	if code, err := callCode(t, bob, "mcp__github__get_issue"); code != 0 {
		t.Fatalf("bob's allowed call: %v", err)
	}
	checkHidden(t, bob, "mcp__github__delete_repo")
	checkHidden(t, nobody, "mcp__time__now") // a caller no rule matches
	if code, err := callCode(t, alice, "mcp__github__delete_repo"); code != 0 {
		t.Fatalf("alice's call: %v", err)
	}
	if n := s.ran["mcp__github__delete_repo"].Load(); n != 1 {
		t.Fatalf("delete_repo ran %d times, want 1 (alice's): a denied call reached the tool", n)
	}

	rep, err := audit.Verify(strings.NewReader(readFile(t, auditPath(s))))
	if err != nil || rep.Lines != 4 {
		t.Fatalf("audit verify: %+v, %v; want 4 lines intact", rep, err)
	}
	type line struct {
		Identity, Client, Name, Server, Outcome string
		ArgKeys                                 []string
	}
	got := auditLines[line](t, s)
	keys := []string{"repo", "secret"}
	want := []line{
		{"bob", "test-client", "mcp__github__get_issue", "github", "ok", keys},
		{"bob", "test-client", "mcp__github__delete_repo", "github", "denied", keys},
		{"mallory", "test-client", "mcp__time__now", "time", "denied", keys},
		{"alice", "test-client", "mcp__github__delete_repo", "github", "ok", keys},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("audit lines (-want +got):\n%s", d)
	}
	if strings.Contains(readFile(t, auditPath(s)), "s3cret") {
		t.Error("args: keys wrote an argument's value to the trail")
	}
}

// With tool search on, search_tools finds only the tools the caller may
// use, and the session lists only those it may use.
func TestSearchFindsOnlyAllowedTools(t *testing.T) {
	s := newServed(t, Options{})
	view, err := toolview.New(s.reg, toolview.Config{Mode: toolview.ModeOn})
	if err != nil {
		t.Fatal(err)
	}
	defer view.Close()
	s.apply(t, `
auth: {issuer: ISSUER, audience: RESOURCE}
policy:
  - groups: [readers]
    allow: [search_tools, "mcp__github__get_*"]
`, nil)
	bob := s.connect(t, s.is.SignEC(t, s.is.Claims("bob", s.resource(), jwt.MapClaims{"groups": []string{"readers"}})), nil)
	res, err := bob.CallTool(t.Context(), &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": "github repo issue delete", "limit": 5}})
	if err != nil || res.IsError {
		t.Fatalf("search_tools: %v %+v", err, res)
	}
	var found struct{ Tools []struct{ Name string } }
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &found); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range found.Tools {
		names = append(names, f.Name)
	}
	if d := cmp.Diff([]string{"mcp__github__get_issue"}, names); d != "" {
		t.Errorf("search_tools found (-want +got):\n%s", d)
	}
}

// A groups claim that is one string is one group, spaces and all: a
// group named "Admins Readonly" does not make its members Admins. Scopes
// are space-separated, in scope and in a string scp (Entra ID's).
func TestGroupsClaimStringIsOneGroup(t *testing.T) {
	for _, c := range []struct {
		claims         jwt.MapClaims
		groups, scopes []string
	}{
		{jwt.MapClaims{"groups": "Admins Readonly", "scope": "read write"}, []string{"Admins Readonly"}, []string{"read", "write"}},
		{jwt.MapClaims{"groups": []any{"Admins Readonly", "ops"}, "scp": "User.Read Mail.Read"}, []string{"Admins Readonly", "ops"}, []string{"User.Read", "Mail.Read"}},
		{jwt.MapClaims{"groups": "", "scp": []any{"a", 1}}, nil, []string{"a"}},
	} {
		c.claims["sub"], c.claims["exp"] = "bob", float64(time.Now().Add(time.Hour).Unix()) // as a verified token has them
		p, err := principalOf(c.claims, "groups")
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(c.groups, p.Groups, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("%v: groups (-want +got):\n%s", c.claims, d)
		}
		if d := cmp.Diff(c.scopes, p.Scopes, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("%v: scopes (-want +got):\n%s", c.claims, d)
		}
	}
}
