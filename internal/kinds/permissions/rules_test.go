package permissions_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/agent"
	"github.com/mcpbridge/mcpbridge/host"
	permkind "github.com/mcpbridge/mcpbridge/internal/kinds/permissions"
)

func permissionsEntry(file string, ps agent.Permissions) host.PlanEntry {
	return host.PlanEntry{Entry: host.Entry{ID: "p", Name: permkind.Name, File: file}, Spec: host.Spec{Config: ps}}
}

// Entries add up, each pattern remembered with the first file that gave
// it; a file that may not allow keeps only its denials; other kinds and
// disabled entries count for nothing.
func TestRulesAddPlan(t *testing.T) {
	disabled := permissionsEntry("user.yaml", agent.Permissions{Allow: []string{"mcp__x__*"}})
	disabled.Entry.Disabled = true
	plan := &host.Plan{Entries: []host.PlanEntry{
		permissionsEntry("user.yaml", agent.Permissions{Allow: []string{"mcp__a__read"}, Deny: []string{"mcp__a__rm"}}),
		{Entry: host.Entry{ID: "a", Name: "mcp-client", File: "user.yaml"}},
		disabled,
		permissionsEntry("project.yaml", agent.Permissions{Allow: []string{"mcp__*"}, Deny: []string{"mcp__a__rm", "mcp__b__rm"}}),
	}}
	var r permkind.Rules
	if err := r.AddPlan(plan, func(file string) bool { return file != "project.yaml" }); err != nil {
		t.Fatal(err)
	}
	want := permkind.Rules{
		Permissions: agent.Permissions{Allow: []string{"mcp__a__read"}, Deny: []string{"mcp__a__rm", "mcp__a__rm", "mcp__b__rm"}},
		From:        map[string]string{"mcp__a__read": "user.yaml", "mcp__a__rm": "user.yaml", "mcp__b__rm": "project.yaml"},
	}
	if d := cmp.Diff(want, r); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// A permissions entry that could not be read stops the gathering with its
// own error.
func TestRulesAddPlanInvalid(t *testing.T) {
	bad := permissionsEntry("user.yaml", agent.Permissions{})
	bad.Err = errors.New("user.yaml:3: config.deny[0]: bad pattern")
	var r permkind.Rules
	if err := r.AddPlan(&host.Plan{Entries: []host.PlanEntry{bad}}, func(string) bool { return true }); err != bad.Err {
		t.Errorf("err = %v, want the entry's", err)
	}
}
