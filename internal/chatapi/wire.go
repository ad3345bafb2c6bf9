// Package chatapi is a client of OpenAI-compatible chat-completions
// endpoints (DeepSeek's API by default): one request answered whole (Do)
// or streamed as server-sent events (Stream), retried with backoff on 429
// and 5xx as the API's Retry-After asks. The API key is read when a
// request is made, sent only as the bearer token, and removed from every
// error text. Sampling and the agent share it.
package chatapi

import "encoding/json"

// DeepSeek's API, the default endpoint. DefaultModel follows DeepSeek's
// "Models & Pricing" page (api-docs.deepseek.com/quick_start/pricing) as
// of 2026-12: "use deepseek-flash" (DeepSeek-V4.1-Flash, thinking mode on
// by default); the older names deepseek-chat and deepseek-reasoner were
// retired on 2026-07-24 and deepseek-v4-flash only points at it. This is
// the one place that says which model mcpbridge asks for by default.
const (
	DefaultBaseURL   = "https://api.deepseek.com"
	DefaultModel     = "deepseek-flash"
	DefaultAPIKeyEnv = "DEEPSEEK_API_KEY"
	// BetaPath is the path below DeepSeek's base URL of its beta
	// endpoint, the one that accepts strict function calling.
	BetaPath = "beta"
)

// Request is a chat-completions request.
type Request struct {
	Model       string         `json:"model"`
	Messages    []Message      `json:"messages"`
	MaxTokens   int64          `json:"max_tokens,omitempty"`
	Temperature *float64       `json:"temperature,omitempty"`
	Stop        []string       `json:"stop,omitempty"`
	Tools       []Tool         `json:"tools,omitempty"`
	ToolChoice  string         `json:"tool_choice,omitempty"`
	Stream      bool           `json:"stream,omitempty"`
	StreamOpts  *StreamOptions `json:"stream_options,omitempty"`
}

// StreamOptions asks for the usage in the last chunk of a stream.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Message is one message of a conversation.
type Message struct {
	Role string `json:"role"`
	// Content is a string, a list of parts, or nil beside tool calls.
	Content any `json:"content"`
	// ReasoningContent is DeepSeek's thinking-mode reasoning. The API
	// wants it back on an assistant turn that made tool calls (it answers
	// 400 otherwise).
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string     `json:"tool_call_id,omitempty"`
}

// Part is one part of a message's content.
type Part struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *ImageURL `json:"image_url,omitempty"`
}

// ImageURL is an image part's URL (a data: URL for inline images).
type ImageURL struct {
	URL string `json:"url"`
}

// ToolCall is a call the model asks for.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function and its arguments (JSON text).
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool is one entry of a request's tools.
type Tool struct {
	Type     string   `json:"type"`
	Function Function `json:"function"`
}

// Function is the function a Tool offers.
type Function struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	// Strict asks for strict function calling (DeepSeek: the beta
	// endpoint only).
	Strict bool `json:"strict,omitempty"`
}

// Usage is a request's token counts. The cache fields are DeepSeek's.
type Usage struct {
	PromptTokens          int `json:"prompt_tokens"`
	CompletionTokens      int `json:"completion_tokens"`
	TotalTokens           int `json:"total_tokens"`
	PromptCacheHitTokens  int `json:"prompt_cache_hit_tokens,omitempty"`
	PromptCacheMissTokens int `json:"prompt_cache_miss_tokens,omitempty"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		PromptTokens:          u.PromptTokens + v.PromptTokens,
		CompletionTokens:      u.CompletionTokens + v.CompletionTokens,
		TotalTokens:           u.TotalTokens + v.TotalTokens,
		PromptCacheHitTokens:  u.PromptCacheHitTokens + v.PromptCacheHitTokens,
		PromptCacheMissTokens: u.PromptCacheMissTokens + v.PromptCacheMissTokens,
	}
}

// Response is an answer whole (a request without Stream).
type Response struct {
	Model   string   `json:"model"`
	Choices []Choice `json:"choices"`
	Usage   Usage    `json:"usage"`
}

// Choice is one choice of a Response.
type Choice struct {
	Message      ReplyMessage `json:"message"`
	FinishReason string       `json:"finish_reason"`
}

// ReplyMessage is the assistant's message in a Response (its content may
// be null).
type ReplyMessage struct {
	Content          *string    `json:"content"`
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCall `json:"tool_calls"`
}

// Completion is a streamed answer put together: the assistant's message
// (reasoning kept), why it finished, the usage of the last chunk.
type Completion struct {
	Message      Message
	FinishReason string
	Model        string
	Usage        Usage
}

// Delta is one piece of a streamed answer, as it arrives: reasoning or
// answer text (never both), or a tool call's start (ToolCallIndex, with
// its ID and name; later pieces of its arguments are not reported).
type Delta struct {
	Reasoning string
	Text      string
	// ToolCall is set when a tool call starts.
	ToolCall *ToolCall
}
