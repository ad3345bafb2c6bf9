package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/agent"
	"github.com/mcpbridge/mcpbridge/tool"
)

// What runs without asking: everything with All, search_tools, a
// read-only tool of a trusted server (never of another: its annotations
// are a stranger's claim), and what the person allowed for good; the rest
// is asked, and denied when no one can be asked.
func TestPolicy(t *testing.T) {
	ro := json.RawMessage(`{"readOnlyHint":true}`)
	call := func(name, server string, ann json.RawMessage) agent.Call {
		return agent.Call{Name: name, Tool: tool.Tool{Name: name, Origin: tool.Origin{Server: server}, Annotations: ann}}
	}
	var asked []string
	answers := map[string]agent.Answer{"mcp__a__x": agent.AlwaysTool, "mcp__b__y": agent.AlwaysServer, "mcp__c__z": agent.Deny}
	p := &agent.Policy{
		Trusted: func(s string) bool { return s == "trusted" },
		Ask: func(_ context.Context, c agent.Call) (agent.Answer, error) {
			asked = append(asked, c.Name)
			return answers[c.Name], nil
		},
	}
	for i, c := range []struct {
		call  agent.Call
		ok    bool
		asked bool
	}{
		{call("mcp__trusted__read", "trusted", ro), true, false},
		{call("mcp__evil__read", "evil", ro), false, true},
		{call("search_tools", "", nil), true, false},
		{call("mcp__a__x", "a", nil), true, true},
		{call("mcp__a__x", "a", nil), true, false},
		{call("mcp__b__y", "b", nil), true, true},
		{call("mcp__b__other", "b", nil), true, false},
		{call("mcp__c__z", "c", nil), false, true},
		{call("mcp__c__z", "c", nil), false, true},
	} {
		before := len(asked)
		ok, err := p.Approve(context.Background(), c.call)
		if err != nil || ok != c.ok || (len(asked) > before) != c.asked {
			t.Errorf("%d %s: approved %v (err %v), asked %v; want %v, asked %v", i, c.call.Name, ok, err, len(asked) > before, c.ok, c.asked)
		}
	}
	noOne := &agent.Policy{}
	if ok, _ := noOne.Approve(context.Background(), call("mcp__a__x", "a", ro)); ok {
		t.Error("approved with no one to ask and no trust")
	}
	if ok, _ := (&agent.Policy{All: true}).Approve(context.Background(), call("mcp__a__x", "a", nil)); !ok {
		t.Error("All did not approve")
	}
}

// Standing permissions: a deny pattern refuses before anything else (even
// All, even search_tools), without asking, and says which pattern; an
// allow pattern runs without asking; a server's pattern (mcp__s__* or
// Claude Code's mcp__s) covers its tools, by the name the server gives
// them when the public one is hashed, and never another server's hashed
// names that only look alike; an "always" answer is kept.
func TestPolicyPermissions(t *testing.T) {
	call := func(name, server, raw string) agent.Call {
		return agent.Call{Name: name, Tool: tool.Tool{Name: name, Origin: tool.Origin{Server: server, Name: raw}}}
	}
	var asked, refused, kept []string
	p := &agent.Policy{
		All: false,
		Rules: agent.Permissions{
			Allow: []string{"mcp__fs__read", "mcp__web__*", "mcp__git", "mcp__a_b__*"},
			Deny:  []string{"mcp__fs__delete", "mcp__web__post", "search_tools", "mcp__my_srv__*"},
		},
		Ask: func(_ context.Context, c agent.Call) (agent.Answer, error) {
			asked = append(asked, c.Name)
			if c.Name == "mcp__new__a" {
				return agent.AlwaysServer, nil
			}
			return agent.Deny, nil
		},
		Refused: func(c agent.Call, pattern string) { refused = append(refused, c.Name+" by "+pattern) },
		Keep:    func(_ agent.Call, pattern string) { kept = append(kept, pattern) },
	}
	for i, c := range []struct {
		call  agent.Call
		ok    bool
		asked bool
	}{
		{call("mcp__fs__read", "fs", "read"), true, false},
		{call("mcp__fs__write", "fs", "write"), false, true},
		{call("mcp__fs__delete", "fs", "delete"), false, false},
		{call("mcp__web__get", "web", "get"), true, false},
		{call("mcp__web__post", "web", "post"), false, false},
		{call("mcp__git__log", "git", "log"), true, false},
		{call("search_tools", "", ""), false, false},
		{call("mcp__my_srv__t_0123456789ab", "my.srv", "t"), false, false}, // denied loosely, by its public name
		{call("mcp__a_b__x_0123456789ab", "a.b", "x"), false, true},        // mcp__a_b__* would not allow it
		{call("mcp__new__a", "new", "a"), true, true},
		{call("mcp__new__b", "new", "b"), true, false},
	} {
		before := len(asked)
		ok, err := p.Approve(context.Background(), c.call)
		if err != nil || ok != c.ok || (len(asked) > before) != c.asked {
			t.Errorf("%d %s: approved %v (err %v), asked %v; want %v, asked %v", i, c.call.Name, ok, err, len(asked) > before, c.ok, c.asked)
		}
	}
	want := []string{"mcp__fs__delete by mcp__fs__delete", "mcp__web__post by mcp__web__post", "search_tools by search_tools", "mcp__my_srv__t_0123456789ab by mcp__my_srv__*"}
	if d := cmp.Diff(want, refused); d != "" {
		t.Errorf("refused (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"mcp__new__*"}, kept); d != "" {
		t.Errorf("kept (-want +got):\n%s", d)
	}
	all := &agent.Policy{All: true, Rules: agent.Permissions{Deny: []string{"mcp__fs__*"}}}
	if ok, _ := all.Approve(context.Background(), call("mcp__fs__read", "fs", "read")); ok {
		t.Error("All ran a denied tool")
	}
	// A server whose every tool is denied is denied its resources through
	// the resource tools too, even with --yes; a deny of one of its tools
	// is not one of the server. The resource tools used to read a denied
	// server's resources.
	denied := &agent.Policy{All: true, Rules: agent.Permissions{Deny: []string{"mcp__secrets", "mcp__vault__*", "mcp__fs__delete", "mcp__my_srv"}}}
	for server, want := range map[string]bool{"secrets": false, "vault": false, "fs": true, "docs": true, "my.srv": false} {
		for _, name := range []string{"read_mcp_resource", "list_mcp_resources"} {
			c := agent.Call{Name: name, Args: json.RawMessage(`{"server":"` + server + `","uri":"x://y"}`)}
			if ok, _ := denied.Approve(context.Background(), c); ok != want {
				t.Errorf("%s of server %s: approved %v, want %v", name, server, ok, want)
			}
		}
	}
	// A list of every server's resources would hold a denied server's: it
	// is refused while a server is denied whole (a list naming another
	// server is not); without such a deny it runs.
	every := agent.Call{Name: "list_mcp_resources", Args: json.RawMessage(`{}`)}
	if ok, _ := denied.Approve(context.Background(), every); ok {
		t.Error("a list of every server's resources ran while a server is denied")
	}
	someTools := &agent.Policy{All: true, Rules: agent.Permissions{Deny: []string{"mcp__fs__delete", "mcp__gh__create_*"}}}
	if ok, _ := someTools.Approve(context.Background(), every); !ok {
		t.Error("a list of every server's resources refused for the deny of some tools")
	}
}

func TestCheckPattern(t *testing.T) {
	for p, want := range map[string]string{"mcp__a__b": "", "mcp__a__*": "", "*": "", "mcp__a": "", " ": "is empty", "mcp__*__x": "may hold * only at its end"} {
		if got := agent.CheckPattern(p); !strings.HasPrefix(got, want) || (want == "") != (got == "") {
			t.Errorf("CheckPattern(%q) = %q, want %q…", p, got, want)
		}
	}
}

// A made-up name, such as a hostile result might tell the model to call,
// is never asked about: an "always this tool" answer to mcp__github or
// mcp__* would allow every tool of github, or every tool, for good. Only
// a registered tool's exact name is kept.
func TestPolicyAlwaysOnlyARegisteredTool(t *testing.T) {
	var asked, kept []string
	p := &agent.Policy{
		Ask: func(_ context.Context, c agent.Call) (agent.Answer, error) {
			asked = append(asked, c.Name)
			return agent.AlwaysTool, nil
		},
		Keep: func(_ agent.Call, pattern string) { kept = append(kept, pattern) },
	}
	for _, name := range []string{"mcp__github", "mcp__*", "mcp__github__*", "a*b"} {
		if ok, err := p.Approve(context.Background(), agent.Call{Name: name}); ok || err != nil {
			t.Errorf("%s, no such tool: approved %v (err %v)", name, ok, err)
		}
	}
	if len(asked) != 0 || len(kept) != 0 {
		t.Fatalf("made-up names: asked %q, kept %q; want neither", asked, kept)
	}
	real := agent.Call{Name: "mcp__github__create_issue", Tool: tool.Tool{Name: "mcp__github__create_issue", Origin: tool.Origin{Server: "github", Name: "create_issue"}}}
	if ok, _ := p.Approve(context.Background(), real); !ok || len(asked) != 1 {
		t.Fatalf("a real github tool: approved %v, asked %q; want approved once asked", ok, asked)
	}
	if d := cmp.Diff([]string{"mcp__github__create_issue"}, kept); d != "" {
		t.Errorf("kept (-want +got):\n%s", d)
	}
	// A registered tool whose name is not what the model called, or reads
	// as a pattern, is approved once and kept as nothing.
	for _, c := range []agent.Call{
		{Name: "mcp__x__y", Tool: tool.Tool{Name: "mcp__x__z", Origin: tool.Origin{Server: "x", Name: "z"}}},
		{Name: "mcp__x*", Tool: tool.Tool{Name: "mcp__x*"}},
		{Name: "mcp__x", Tool: tool.Tool{Name: "mcp__x"}},
	} {
		if ok, _ := p.Approve(context.Background(), c); !ok {
			t.Errorf("%s: not approved once", c.Name)
		}
	}
	if len(kept) != 1 {
		t.Errorf("kept %q; want only the real tool's name", kept)
	}
}
