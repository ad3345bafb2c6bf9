package permissions_test

import (
	"fmt"

	"github.com/mcpbridge/mcpbridge/agent"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/confedit"
	permkind "github.com/mcpbridge/mcpbridge/internal/kinds/permissions"
)

// A person answered "always" for a tool: the pattern joins the config's
// permissions entry, the rest of the file as it was.
func ExampleAllow() {
	data := []byte("# mine\n- id: perms\n  name: permissions\n  config:\n    allow: [mcp__demo__add] # safe\n")
	doc, list, err := confedit.Parse("mcpbridge.yaml", data)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := permkind.Allow(data, doc, list, "mcp__demo__echo")
	fmt.Print(string(out), err)
	// Output:
	// # mine
	// - id: perms
	//   name: permissions
	//   config:
	//     allow: [mcp__demo__add, mcp__demo__echo] # safe
	// <nil>
}

// A harness's agent gathers the standing permissions of a config, a
// project's file allowed only to deny.
func ExampleRules_AddPlan() {
	plan := &host.Plan{Entries: []host.PlanEntry{{
		Entry: host.Entry{ID: "perms", Name: permkind.Name, File: "mcpbridge.yaml"},
		Spec:  host.Spec{Config: agent.Permissions{Allow: []string{"mcp__demo__*"}, Deny: []string{"mcp__demo__rm"}}},
	}}}
	var r permkind.Rules
	err := r.AddPlan(plan, func(file string) bool { return file != "mcpbridge.yaml" })
	fmt.Println(r.Allow, r.Deny, r.From["mcp__demo__rm"], err)
	// Output: [] [mcp__demo__rm] mcpbridge.yaml <nil>
}
