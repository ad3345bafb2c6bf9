package tool

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Content is one model-visible content block. Today only text blocks exist;
// the Type field keeps the wire shape open for other kinds.
type Content struct {
	Type string `json:"type"` // "text"
	Text string `json:"text"`
}

// Text returns a text content block, the only kind a model sees today.
func Text(s string) Content { return Content{Type: "text", Text: s} }

// Output is what a tool body returns on success.
type Output struct {
	// Content is the model view. It should be non-empty; the registry
	// passes it through exactly as returned (nil stays nil) rather than
	// inventing text the tool did not produce. A source may leave it and
	// Value out of a successful result with a Wire when its consumer
	// forwards the Wire (ForwardsFrom).
	Content []Content
	// Value is the canonical value for programmatic callers (optional, may
	// be nil). When present it must be valid JSON, or the call fails with
	// CodeInvalidToolOutput.
	Value json.RawMessage
	// Wire is the source's own result as it came over the wire (for an MCP
	// server, the raw tools/call result object), for consumers that forward
	// it rather than show it: a gateway passes it on byte for byte. Nil for
	// a tool written in Go. When present it must be valid JSON.
	Wire json.RawMessage
}

// Func is a tool body. args is always valid JSON, usually an object: the
// registry checks syntax only and passes the caller's bytes through (no
// copy), so a body must not modify them. A body should honour ctx.
type Func func(ctx context.Context, args json.RawMessage) (Output, error)

// Tool is one registered definition. The registry keeps it as given.
type Tool struct {
	// Name is the public name the model calls; unique within a registry.
	Name string
	// Description is shown to the model.
	Description string
	// InputSchema is a JSON Schema, passed through untouched (never
	// re-encoded) so what the model sees is what the producer wrote. If
	// set it must be valid JSON.
	InputSchema json.RawMessage
	// OutputSchema is optional and only advertised; the registry does not
	// validate results against it. If set it must be valid JSON.
	OutputSchema json.RawMessage
	// Execute is the body; required.
	Execute Func

	// Origin says where the tool comes from, for consumers that route,
	// rank or rename by it; the zero value means a tool written in Go.
	Origin Origin
	// Title is a human-friendly display name (optional).
	Title string
	// Annotations are the source's behaviour hints as a JSON object
	// (readOnlyHint, destructiveHint, …), passed through untouched;
	// optional. If set it must be valid JSON.
	Annotations json.RawMessage
	// Icons are the source's images for the tool; optional.
	Icons []Icon
	// Meta is the source's _meta object, passed through untouched so that
	// extensions reach the consumer as sent (an MCP Apps tool names its
	// ui:// resource in _meta.ui); optional. If set it must be valid JSON.
	Meta json.RawMessage
	// Background reports that the source can run a call of the tool as
	// background work (WithBackground; for an MCP server, a tool whose
	// execution.taskSupport is "optional" or "required"): a consumer may
	// say so to its own clients (a gateway lists it as supporting tasks).
	Background bool
	// ServerTasks reports that the source's server decides per call
	// whether the call becomes a task (the 2026-07-28 tasks extension),
	// maybe after rounds of questions, and says so when it does
	// (TaskStarted): a gateway relays those rounds as they come and
	// makes its own task only when the server made one. Set with
	// Background.
	ServerTasks bool
	// AlwaysLoad asks that the model always see the tool, even when
	// deferred loading (package toolview) hides the rest of the catalog
	// until a search finds it: set on every tool of an mcp-client entry
	// with alwaysLoad: true.
	AlwaysLoad bool
}

// Origin names the source of a tool: the server it comes from and the
// tool's own name there. Both are empty for a tool written in Go.
type Origin struct {
	// Server is the name of the source (an MCP server's serverName).
	Server string
	// Name is the tool's name at the source (its raw MCP name), which the
	// public Name may have had to change.
	Name string
}

// Error codes carried in Result.Error.Code for harness errors, so callers
// can tell the registry's own failures from a tool's. Plain tool failures
// carry no code.
const (
	// CodeUnknownTool: no tool by that name is registered.
	CodeUnknownTool = "UNKNOWN_TOOL"
	// CodeInvalidArguments: the arguments are not valid JSON.
	CodeInvalidArguments = "INVALID_ARGUMENTS"
	// CodeAborted: the body succeeded but the call was cancelled meanwhile,
	// so its result is discarded.
	CodeAborted = "ABORTED"
	// CodeAbortedBeforeDispatch: the call was cancelled before the body ran.
	CodeAbortedBeforeDispatch = "ABORTED_BEFORE_DISPATCH"
	// CodeInvalidToolOutput: the body returned an Output.Value that is not
	// valid JSON (it could not be printed or forwarded).
	CodeInvalidToolOutput = "INVALID_TOOL_OUTPUT"
	// CodeTimeout: the body gave up waiting (its error wraps
	// context.DeadlineExceeded, such as an MCP server's toolCallTimeoutMs
	// passing) while the caller was still waiting, so metrics and callers
	// can tell a slow backend from a failing one.
	CodeTimeout = "TIMEOUT"
)

// ErrorInfo describes why a call failed.
type ErrorInfo struct {
	Message string `json:"message"`
	// Code is one of the Code constants for harness errors, empty for a
	// plain tool failure.
	Code string `json:"code,omitempty"`
}

// Result is the outcome of one execution, in the shape
// `mcpbridge call --json` prints:
// {"isError":…, "content":[…], "value":…, "error":{"message":…}}
// (absent fields omitted). A failure has IsError set, Error filled, no
// Value, and Content holding the single text "Error: " + Error.Message.
type Result struct {
	IsError bool            `json:"isError"`
	Content []Content       `json:"content"`
	Value   json.RawMessage `json:"value,omitempty"`
	Error   *ErrorInfo      `json:"error,omitempty"`
	// Wire is the source's own wire result (Output.Wire, or a ToolError's
	// Wire) when there is one, whether the call succeeded or not; never
	// printed. A consumer that forwards results (a gateway) serves it and
	// IsError instead of Content.
	Wire json.RawMessage `json:"-"`
	// Cause is the body's error when the call failed with one, never
	// printed: a consumer that forwards results tells failures apart by
	// it (a gateway answers an MCP backend's JSON-RPC error with that
	// error, not with a result).
	Cause error `json:"-"`
}

// Text joins the texts of Content with "\n": what a CLI prints and what a
// text-only model sees.
func (r Result) Text() string {
	switch len(r.Content) {
	case 0:
		return ""
	case 1:
		return r.Content[0].Text // the common case, without a builder
	}
	var b strings.Builder
	for i, c := range r.Content {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(c.Text)
	}
	return b.String()
}

// failure builds the Result of a failed call.
func failure(msg, code string) Result {
	return Result{
		IsError: true,
		Content: []Content{Text("Error: " + msg)},
		Error:   &ErrorInfo{Message: msg, Code: code},
	}
}

// ToolError is a failure that the tool's source reported with a result of
// its own (an MCP result with isError: true): Message is what the model sees
// after "Error: ", Wire the source's result for consumers that forward it.
// A body returns it as its error.
type ToolError struct {
	Message string
	Wire    json.RawMessage
}

// Error returns Message.
func (e *ToolError) Error() string { return e.Message }

// ErrConflict is wrapped by the error of a registration whose name is
// already taken, so producers can tell a squatter from a bad definition.
var ErrConflict = errors.New("tool name is already registered")

// ErrNotFound is wrapped by the error of Execute when no tool has the name.
// Its text reads as the start of the message: `unknown tool "<name>"`.
var ErrNotFound = errors.New("unknown tool")

// WithheldError is the error of Execute for a tool its source withholds
// (Offer.Withheld): `tool "<name>" is withheld: <why>`. It wraps
// ErrNotFound: no tool by that name is registered.
type WithheldError struct {
	Name, Why string
}

func (e *WithheldError) Error() string { return fmt.Sprintf("tool %q is withheld: %s", e.Name, e.Why) }

// Unwrap returns ErrNotFound.
func (e *WithheldError) Unwrap() error { return ErrNotFound }

// ConflictError is the error of a registration whose name is already
// registered (or appears twice in one call). It carries the name so a
// producer can report which one without parsing text; it wraps ErrConflict.
type ConflictError struct {
	Name string
	// Kind is what the name names: "" for a tool, "prompt", "skill", or
	// "server" (a second source publishing resources or prompts as the
	// same server).
	Kind string
}

// Error returns exactly `tool "<name>" is already registered` (with the
// Kind in place of "tool" when set).
func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s %q is already registered", cmp.Or(e.Kind, "tool"), e.Name)
}

// Unwrap returns ErrConflict, so errors.Is(err, ErrConflict) holds.
func (e *ConflictError) Unwrap() error { return ErrConflict }
