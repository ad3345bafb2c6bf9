package tokens_test

import (
	"encoding/json"
	"fmt"

	"github.com/mcpbridge/mcpbridge/tokens"
	"github.com/mcpbridge/mcpbridge/tool"
)

// What a tool's definition costs in a model's context, counted offline
// as a chat-completions request carries it.
func ExampleTool() {
	t := tool.Tool{
		Name:        "mcp__time__now",
		Description: "The current time in a time zone.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"zone":{"type":"string"}}}`),
	}
	n, err := tokens.Tool(t)
	fmt.Println(n > 20 && n < 60, err)
	words, _ := tokens.Count("hello world")
	fmt.Println(words)
	// Output:
	// true <nil>
	// 2
}
