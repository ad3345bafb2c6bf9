package scopes_test

import (
	"fmt"
	"os"

	"github.com/mcpbridge/mcpbridge/internal/scopes"
)

// The config files a command run here would read, user scope first.
func ExampleFound() {
	for _, f := range scopes.Found(os.Getenv) {
		fmt.Println(f.Scope, f.Path)
	}
}

// The user file of someone whose environment sets only HOME.
func ExampleUserPath() {
	getenv := func(k string) string { return map[string]string{"HOME": "/home/ada"}[k] }
	fmt.Println(scopes.UserPath(getenv))
	// Output: /home/ada/.config/mcpbridge/config.yaml
}
