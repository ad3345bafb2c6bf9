package demo_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcpbridge/mcpbridge/internal/demo"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Connect a client to the demo server in memory and call its add tool.
func ExampleNewServer() {
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := demo.NewServer().Connect(ctx, st, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Wait()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 3}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output: 5
}
