package agent

import (
	"encoding/json"
	"strings"
)

// Event types, as `mcpbridge agent --json` prints them (README.md).
const (
	EventSession    = "session"     // the CLI's: the session id, model and endpoint
	EventReasoning  = "reasoning"   // a piece of the model's reasoning
	EventText       = "text"        // a piece of the model's answer
	EventToolCall   = "tool_call"   // a call the model made, before it runs
	EventToolResult = "tool_result" // its result, with its duration
	EventUsage      = "usage"       // the tokens of one model request
	EventNotice     = "notice"      // something the person should know
	EventResult     = "result"      // the CLI's: the final text and usage totals
)

// Event is one thing that happened in a Run. Fields other than Type are
// set as the type needs.
type Event struct {
	Type string `json:"type"`
	// Session, Model and Endpoint (the model's base URL as written, so a
	// script sees where the conversation goes): EventSession.
	Session  string `json:"session,omitempty"`
	Model    string `json:"model,omitempty"`
	Endpoint string `json:"endpoint,omitempty"`
	// Text: reasoning, text and notice pieces, the result's answer, a
	// tool result's text as the model sees it.
	Text string `json:"text,omitempty"`
	// ID, Name, Arguments: the call of tool_call and tool_result.
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// IsError, Denied, DurationMs, Spilled: tool_result.
	IsError    bool   `json:"isError,omitempty"`
	Denied     bool   `json:"denied,omitempty"`
	DurationMs int64  `json:"durationMs,omitempty"`
	Spilled    string `json:"spilled,omitempty"`
	// Usage: usage (one request) and result (the run's).
	Usage *Usage `json:"usage,omitempty"`
	// Total, Steps, Error: result.
	Total *Usage `json:"total,omitempty"`
	Steps int    `json:"steps,omitempty"`
	Error string `json:"error,omitempty"`
}

// joinShort lists names, at most ten of them.
func joinShort(names []string) string {
	if len(names) > 10 {
		return strings.Join(names[:10], ", ") + ", …"
	}
	return strings.Join(names, ", ")
}
