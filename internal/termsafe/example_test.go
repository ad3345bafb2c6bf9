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
