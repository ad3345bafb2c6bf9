package confedit_test

import (
	"fmt"

	"github.com/mcpbridge/mcpbridge/internal/confedit"
)

// An entry appended to a commented file leaves every line of it as it
// was; removing the entry again gives the file back byte for byte.
func Example() {
	file := []byte(`# my servers
- id: time        # the clock
  name: mcp-client
  config: {serverName: time, transport: stdio, command: uvx, args: [mcp-server-time]}

# the end
`)
	doc, list, err := confedit.Parse("mcpbridge.yaml", file)
	if err != nil {
		fmt.Println(err)
		return
	}
	entry := confedit.Mapping("id", "docs", "name", "mcp-client")
	cfg := confedit.Mapping("serverName", "docs", "transport", "streamable-http", "url", "https://docs.example/mcp")
	confedit.AppendNode(entry, "config", cfg)
	added, err := confedit.Append(file, doc, list, entry)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(added))

	doc, list, _ = confedit.Parse("mcpbridge.yaml", added)
	removed, _ := confedit.Remove(added, doc, list, confedit.Find(list, "docs"))
	fmt.Println("given back:", string(removed) == string(file))
	// Output:
	// # my servers
	// - id: time        # the clock
	//   name: mcp-client
	//   config: {serverName: time, transport: stdio, command: uvx, args: [mcp-server-time]}
	// - id: docs
	//   name: mcp-client
	//   config:
	//     serverName: docs
	//     transport: streamable-http
	//     url: https://docs.example/mcp
	//
	// # the end
	// given back: true
}

// Replace writes one entry changed in its node tree over its own lines;
// the comments around it and every other line stay.
func ExampleReplace() {
	file := []byte(`# permissions first
- id: permissions
  name: permissions
  config:
    allow: [mcp__time__now]   # asked once
- id: time
  name: mcp-client
`)
	doc, list, _ := confedit.Parse("config.yaml", file)
	i := confedit.Find(list, "permissions")
	allow := confedit.Value(confedit.Value(list.Content[i], "config"), "allow")
	allow.Content = append(allow.Content, confedit.Scalar("mcp__docs__*"))
	out, _ := confedit.Replace(file, doc, list, i)
	fmt.Print(string(out))
	// Output:
	// # permissions first
	// - id: permissions
	//   name: permissions
	//   config:
	//     allow: [mcp__time__now, mcp__docs__*] # asked once
	// - id: time
	//   name: mcp-client
}
