//lint:file-ignore SA1019 sampling is deprecated as of MCP 2026-07-28 (SEP-2577) but servers of 2025-11-25 use it.

package sampling

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/chatapi"
)

// toChat maps a sampling request to a chat-completions request for model:
// the system prompt first, each message's blocks as chat messages (a
// tool_use is the assistant's tool call, a tool_result a "tool" message),
// the tools as functions, toolChoice's mode as tool_choice.
func toChat(p *mcp.CreateMessageWithToolsParams, model string, maxTokens int64) (*chatapi.Request, error) {
	req := &chatapi.Request{Model: model, MaxTokens: p.MaxTokens, Stop: p.StopSequences}
	if maxTokens > 0 && (req.MaxTokens == 0 || req.MaxTokens > maxTokens) {
		req.MaxTokens = maxTokens
	}
	if p.Temperature != 0 {
		req.Temperature = &p.Temperature
	}
	if p.SystemPrompt != "" {
		req.Messages = append(req.Messages, chatapi.Message{Role: "system", Content: p.SystemPrompt})
	}
	for i, m := range p.Messages {
		msgs, err := chatMessages(m)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i+1, err)
		}
		req.Messages = append(req.Messages, msgs...)
	}
	for _, t := range p.Tools {
		schema, err := json.Marshal(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", t.Name, err)
		}
		req.Tools = append(req.Tools, chatapi.Tool{Type: "function", Function: chatapi.Function{Name: t.Name, Description: t.Description, Parameters: schema}})
	}
	if p.ToolChoice != nil && len(req.Tools) > 0 {
		req.ToolChoice = p.ToolChoice.Mode
	}
	return req, nil
}

// chatMessages maps one sampling message: its tool results first (a
// chat API wants them right after the assistant's tool calls), then its
// text and images as one message of its role, with its tool calls.
func chatMessages(m *mcp.SamplingMessageV2) ([]chatapi.Message, error) {
	var out []chatapi.Message
	var parts []chatapi.Part
	var calls []chatapi.ToolCall
	for _, c := range m.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, chatapi.Part{Type: "text", Text: c.Text})
		case *mcp.ImageContent:
			parts = append(parts, chatapi.Part{Type: "image_url", ImageURL: &chatapi.ImageURL{URL: "data:" + c.MIMEType + ";base64," + encodeBase64(c.Data)}})
		case *mcp.ToolUseContent:
			args, err := json.Marshal(c.Input)
			if err != nil {
				return nil, err
			}
			calls = append(calls, chatapi.ToolCall{ID: c.ID, Type: "function", Function: chatapi.FunctionCall{Name: c.Name, Arguments: string(args)}})
		case *mcp.ToolResultContent:
			out = append(out, chatapi.Message{Role: "tool", ToolCallID: c.ToolUseID, Content: toolResultText(c)})
		default:
			return nil, fmt.Errorf("%T content cannot be sent to a chat-completions model", c)
		}
	}
	if len(parts) > 0 || len(calls) > 0 {
		out = append(out, chatapi.Message{Role: string(m.Role), Content: partsContent(parts), ToolCalls: calls})
	}
	return out, nil
}

// partsContent is a message's content: plain text when it is only text
// (what every provider takes), parts when it has images, null when empty
// (an assistant message with only tool calls).
func partsContent(parts []chatapi.Part) any {
	var text []string
	for _, p := range parts {
		if p.Type != "text" {
			return parts
		}
		text = append(text, p.Text)
	}
	if len(text) == 0 {
		return nil
	}
	return strings.Join(text, "\n")
}

// toolResultText is a tool_result as the text of a "tool" message: its
// text blocks, else its structured content as JSON; marked when an error.
func toolResultText(c *mcp.ToolResultContent) string {
	var text []string
	for _, b := range c.Content {
		if t, ok := b.(*mcp.TextContent); ok {
			text = append(text, t.Text)
		}
	}
	s := strings.Join(text, "\n")
	if s == "" && c.StructuredContent != nil {
		b, _ := json.Marshal(c.StructuredContent)
		s = string(b)
	}
	if c.IsError {
		s = "Error: " + s
	}
	return s
}

// stopReasons maps finish_reason to MCP's stopReason.
var stopReasons = map[string]string{"stop": "endTurn", "length": "maxTokens", "tool_calls": "toolUse"}

// fromChat maps the first choice of a chat response to a sampling result:
// its text, and each tool call as a tool_use block.
func fromChat(resp *chatapi.Response, model string) (*mcp.CreateMessageWithToolsResult, error) {
	if len(resp.Choices) == 0 {
		return nil, fmt.Errorf("the model's answer has no choices")
	}
	ch := resp.Choices[0]
	res := &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: resp.Model, StopReason: ch.FinishReason}
	if res.Model == "" {
		res.Model = model
	}
	if r, ok := stopReasons[ch.FinishReason]; ok {
		res.StopReason = r
	}
	if ch.Message.Content != nil && *ch.Message.Content != "" {
		res.Content = append(res.Content, &mcp.TextContent{Text: *ch.Message.Content})
	}
	for _, call := range ch.Message.ToolCalls {
		input := map[string]any{}
		if strings.TrimSpace(call.Function.Arguments) != "" {
			if err := json.Unmarshal([]byte(call.Function.Arguments), &input); err != nil {
				return nil, fmt.Errorf("the model's arguments for tool %q are not a JSON object: %w", call.Function.Name, err)
			}
		}
		res.Content = append(res.Content, &mcp.ToolUseContent{ID: call.ID, Name: call.Function.Name, Input: input})
	}
	if len(res.Content) == 0 {
		res.Content = []mcp.Content{&mcp.TextContent{}}
	}
	return res, nil
}
