package naming_test

import (
	"fmt"

	"github.com/mcpbridge/mcpbridge/internal/naming"
)

func ExamplePublic() {
	fmt.Println(naming.Public("github", "create_issue"))
	fmt.Println(naming.Public("srv", "admin.reset"), naming.Hashed("srv", "admin.reset"))
	fmt.Println(naming.Public("emoji", "rocket\U0001F680"))
	// Output:
	// mcp__github__create_issue
	// mcp__srv__admin_reset_3b185f786768 true
	// mcp__emoji__rocket___a139f928edb7
}
