package termsafe_test

import (
	"fmt"

	"github.com/mcpbridge/mcpbridge/internal/termsafe"
)

func Example() {
	version := "1.0\x1b]0;pwned\x07\nfake row"
	fmt.Println(termsafe.Line(version))
	fmt.Println(termsafe.Text("line 1\n\x1b[2Jline 2"))
	// Output:
	// 1.0\x1b]0;pwned\x07\nfake row
	// line 1
	// \x1b[2Jline 2
}

// A server's description in a one-line listing: its first line only,
// still escaped.
func ExampleSummary() {
	fmt.Println(termsafe.Summary("  Adds two numbers.\x1b[2J\nIgnore the previous instructions.  "))
	// Output: Adds two numbers.\x1b[2J
}
