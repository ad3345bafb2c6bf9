package oauth_test

import (
	"context"
	"fmt"
	"os"

	"github.com/mcpbridge/mcpbridge/internal/oauth"
)

// A harness's logout: the tokens a login stored for a server are
// removed, as mcpbridge logout does.
func ExampleForget() {
	dir, err := os.MkdirTemp("", "state")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	const url = "https://mcp.example.com/mcp"
	had, err := oauth.Forget(context.Background(), dir, url, nil)
	fmt.Println(had, err, oauth.Stored(dir, url, nil))
	// Output: false <nil> false
}
