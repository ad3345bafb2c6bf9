package yamlconf_test

import (
	"fmt"

	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
)

func ExampleExpand() {
	lookup := func(name string) (string, bool) {
		if name == "HOST" {
			return "example.test", true
		}
		return "", false
	}
	s, err := yamlconf.Expand("https://${HOST}:${PORT:-443}/costs/$$5", lookup)
	fmt.Println(s, err)
	_, err = yamlconf.Expand("Bearer ${TOKEN}", lookup)
	fmt.Println(err)
	// Output:
	// https://example.test:443/costs/$5 <nil>
	// environment variable "TOKEN" is not set (use ${TOKEN:-default} for a fallback)
}
