package mcpclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/mcpbridge/mcpbridge/chattools"
	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// Embedding the bridge in a harness: start an MCP server, hand its tools
// to a model in the chat-completions shape, and run the call the model
// asks for. The server here is this program itself, re-executed as a
// stdio server; a harness would start, say, "npx -y
// @modelcontextprotocol/server-everything stdio".
func Example() {
	reg := tool.NewRegistry()
	srv, err := mcpclient.Start(mcpclient.Config{
		ServerName: "demo",
		Transport:  mcpclient.TransportStdio,
		Command:    os.Args[0],
		Env:        map[string]string{mcppeer.ChildEnv: "fixture"},
	}, mcpclient.Options{Registry: reg})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.WaitReady(ctx); err != nil {
		fmt.Println(err)
		return
	}

	// The "tools" of a chat-completions request.
	tools := chattools.All(reg.List())
	i := slices.IndexFunc(tools, func(t chattools.Tool) bool { return t.Function.Name == "mcp__demo__echo" })
	definition, _ := json.Marshal(tools[i])
	fmt.Println(string(definition))

	// The model answered with a call of one of them.
	res, err := reg.Execute(ctx, "mcp__demo__echo", json.RawMessage(`{"message":"hello"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.IsError, res.Text())
	// Output:
	// {"type":"function","function":{"name":"mcp__demo__echo","description":"Returns the message, prefixed with \"Echo: \".","parameters":{"type":"object","properties":{"message":{"type":"string","description":"The message to echo"}},"required":["message"],"additionalProperties":false}}}
	// false Echo: hello
}
