// Package chattools is the chat-completions shape of registry tools: the
// "tools" array a harness hands an OpenAI-compatible model (DeepSeek and
// OpenAI accept it as is). It carries no tokenizer and no MCP, so a
// harness that only needs the shape pays for neither.
package chattools

import (
	"bytes"
	"encoding/json"

	"github.com/mcpbridge/mcpbridge/tool"
)

// Tool is one entry of a chat-completions "tools" array.
type Tool struct {
	Type     string   `json:"type"`
	Function Function `json:"function"`
}

// Function is the function a Tool offers.
type Function struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Of returns t as a chat-completions tool: its public name, description
// and input schema ({"type":"object"} when the server sent none, as the
// chat APIs require an object).
func Of(t tool.Tool) Tool {
	params := t.InputSchema
	if len(bytes.TrimSpace(params)) == 0 {
		params = json.RawMessage(`{"type":"object"}`)
	}
	return Tool{Type: "function", Function: Function{Name: t.Name, Description: t.Description, Parameters: params}}
}

// All returns Of of each tool, in order.
func All(tools []tool.Tool) []Tool {
	out := make([]Tool, len(tools))
	for i, t := range tools {
		out[i] = Of(t)
	}
	return out
}
