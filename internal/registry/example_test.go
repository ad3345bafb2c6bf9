package registry_test

import (
	"fmt"
	"strings"

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
