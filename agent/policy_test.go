package agent_test

import (
	"context"
	"encoding/json"
	"testing"

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
