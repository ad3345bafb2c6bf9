package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/tool"
)

// A registry's tools served as one MCP server, here to an in-process
// go-sdk client; ServeStdio and Handler serve real clients the same way.
func Example() {
	reg := tool.NewRegistry()
	reg.Register(tool.Tool{
		Name:        "mcp__demo__echo",
		Description: "Echoes its message.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}}}`),
		Execute: func(_ context.Context, args json.RawMessage) (tool.Output, error) {
			var in struct{ Message string }
			if err := json.Unmarshal(args, &in); err != nil {
				return tool.Output{}, err
			}
			return tool.Output{Content: []tool.Content{tool.Text("Echo: " + in.Message)}}, nil
		},
	})
	g := gateway.New(reg, gateway.Options{})
	defer g.Close()

	ctx, stop := context.WithCancel(context.Background())
	clientSide, serverSide := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- g.ServeTransport(ctx, serverSide) }()
	defer func() { stop(); <-served }()

	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil)
	session, err := client.Connect(ctx, clientSide, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer session.Close()
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("tool:", t.Name)
	}
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__demo__echo", Arguments: map[string]any{"message": "hi"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// tool: mcp__demo__echo
	// Echo: hi
}

// Serving over Streamable HTTP: Listen refuses a non-loopback address
// unless a bearer token is configured.
func ExampleListen() {
	_, err := gateway.Listen("0.0.0.0:7410", gateway.Options{})
	fmt.Println(err != nil)
	ln, err := gateway.Listen("127.0.0.1:0", gateway.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	g := gateway.New(tool.NewRegistry(), gateway.Options{})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.ServeListener(ctx, ln) }() // MCP at /mcp, health at /healthz
	stop()
	fmt.Println(<-done)
	// Output:
	// true
	// <nil>
}
