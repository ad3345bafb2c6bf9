package permissions_test

import (
	"fmt"

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
