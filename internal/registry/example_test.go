package registry_test

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/internal/confedit"
	"github.com/mcpbridge/mcpbridge/internal/registry"
)

// Build turns a server.json into the entry that runs it: here its npm
// package, with the secret it needs as a reference to set.
func ExampleBuild() {
	s, err := registry.ParseServer([]byte(`{
	  "name": "io.modelcontextprotocol.anonymous/brave-search", "version": "1.0.2",
	  "packages": [{"registryType": "npm", "identifier": "@modelcontextprotocol/server-brave-search",
	    "version": "1.0.2", "transport": {"type": "stdio"},
	    "environmentVariables": [{"name": "BRAVE_API_KEY", "isRequired": true, "isSecret": true}]}]
	}`), "server.json")
	if err != nil {
		panic(err)
	}
	e, err := registry.Build(s, registry.Choice{})
	if err != nil {
		panic(err)
	}
	fmt.Println(e.Command, strings.Join(e.Args, " "))
	fmt.Println(e.Env)
	fmt.Println(e.Notes)
	// Output:
	// npx -y @modelcontextprotocol/server-brave-search@1.0.2
	// [{BRAVE_API_KEY ${BRAVE_API_KEY}}]
	// [set BRAVE_API_KEY: a secret]
}

// A registry server becomes a config file's entry: named after its
// registry name unless the user names it, recording where it came from.
func ExampleEntry_Node() {
	name, version := registry.SplitRef("io.github.someone/weather@2.1.0")
	e := registry.Entry{Transport: "streamable-http", URL: "https://weather.example/mcp", Name: name, Version: version}
	out, err := confedit.Encode(&yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{e.Node(registry.ServerName(name))}})
	fmt.Print(string(out), err)
	// Output:
	// - id: weather
	//   name: mcp-client
	//   config:
	//     serverName: weather
	//     transport: streamable-http
	//     url: https://weather.example/mcp
	//     registry: {name: io.github.someone/weather, version: 2.1.0}
	// <nil>
}
