package codemode

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/mcpbridge/mcpbridge/tool"
)

// What a program's process and Run say to each other: one JSON object a
// line, each way. Run writes a childRequest first; the process then asks
// for calls (childMessage.Call), says which it gave up on (Cancel), and
// ends with Done; Run answers each call (parentMessage.Reply) and may ask
// the program to stop (Stop).

// childRequest is the program and what bounds it.
type childRequest struct {
	Program string      `json:"program"`
	Tools   []wireTool  `json:"tools"`
	Options wireOptions `json:"options"`
}

// wireTool is what the API of a tool needs (not its body).
type wireTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Server       string          `json:"server,omitempty"`
	RawName      string          `json:"rawName,omitempty"`
}

// wireOptions are the Options the process applies itself (the rest stay
// with Run: the view, the attachments).
type wireOptions struct {
	Timeout       time.Duration `json:"timeout"`
	MaxCalls      int           `json:"maxCalls"`
	MaxConcurrent int           `json:"maxConcurrent"`
	MaxOutput     int           `json:"maxOutput"`
	MaxMemory     int64         `json:"maxMemory"`
	CallUnlisted  bool          `json:"callUnlisted,omitempty"`
	// Deadline is when the caller's time limit ends: the process starts
	// its own clock later (its start, reading the request), and counts to
	// the same end, not Timeout from then.
	Deadline time.Time `json:"deadline,omitzero"`
}

// childMessage is one line from the program's process.
type childMessage struct {
	Call   *wireCall   `json:"call,omitempty"`
	Cancel *wireCancel `json:"cancel,omitempty"` // a call the program no longer waits for
	Done   *wireDone   `json:"done,omitempty"`
}

// wireCancel is a call the program gave up, and why (its time limit, its
// end), which the call's context then carries.
type wireCancel struct {
	ID    uint64     `json:"id"`
	Cause *wireError `json:"cause,omitempty"`
}

// cause is the cause the call's context ends with: the program's reason,
// its sentinel kept (a call cut by the time limit is ErrTimeLimit's).
func (c *wireCancel) cause() error {
	if c.Cause == nil {
		return nil
	}
	if sentinel := kinds[c.Cause.Kind]; sentinel != nil {
		return &Error{Err: sentinel, Message: c.Cause.Message}
	}
	return errors.New(c.Cause.Message)
}

type wireCall struct {
	ID   uint64          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type wireDone struct {
	Result Result     `json:"result"`
	Error  *wireError `json:"error,omitempty"`
}

// parentMessage is one line to the program's process.
type parentMessage struct {
	Reply *wireReply `json:"reply,omitempty"`
	Stop  string     `json:"stop,omitempty"` // why the program must stop (its caller cancelled)
}

type wireReply struct {
	ID     uint64          `json:"id"`
	Result tool.Result     `json:"result"`
	Wire   json.RawMessage `json:"wire,omitempty"` // Result.Wire, which its JSON leaves out
	Error  string          `json:"error,omitempty"`
}

// wireError is an *Error (Kind names its sentinel), or another error of
// Run (Kind "").
type wireError struct {
	Kind         string `json:"kind,omitempty"`
	Message      string `json:"message"`
	Line, Column int    `json:",omitempty"`
}

// kinds name the sentinels an *Error wraps; "cancelled" is the caller's
// cancellation, whose cause only Run knows.
var kinds = map[string]error{
	"syntax": ErrSyntax, "thrown": ErrThrown, "time": ErrTimeLimit, "calls": ErrCallLimit,
	"output": ErrOutputLimit, "memory": ErrMemoryLimit, "result": ErrResult, "stalled": ErrStalled,
}

const kindCancelled = "cancelled"

func wireToolsOf(api *API) []wireTool {
	out := make([]wireTool, 0, len(api.byName))
	for _, f := range api.byName {
		t := f.tool
		out = append(out, wireTool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema,
			OutputSchema: t.OutputSchema, Server: t.Origin.Server, RawName: t.Origin.Name})
	}
	return out
}

func toolsOfWire(ws []wireTool) []tool.Tool {
	out := make([]tool.Tool, len(ws))
	for i, w := range ws {
		out[i] = tool.Tool{Name: w.Name, Description: w.Description, InputSchema: w.InputSchema,
			OutputSchema: w.OutputSchema, Origin: tool.Origin{Server: w.Server, Name: w.RawName}}
	}
	return out
}

func wireOptionsOf(o Options) wireOptions {
	return wireOptions{Timeout: o.Timeout, MaxCalls: o.MaxCalls, MaxConcurrent: o.MaxConcurrent,
		MaxOutput: o.MaxOutput, MaxMemory: o.MaxMemory, CallUnlisted: o.CallUnlisted}
}

// options are the Options the process applies; Timeout stays the
// caller's, which errors name.
func (w wireOptions) options() Options {
	return Options{Timeout: w.Timeout, MaxCalls: w.MaxCalls, MaxConcurrent: w.MaxConcurrent,
		MaxOutput: w.MaxOutput, MaxMemory: w.MaxMemory, CallUnlisted: w.CallUnlisted}
}

// end is when the program's time limit ends: the caller's deadline, or
// Timeout from now without one.
func (w wireOptions) end() time.Time {
	if w.Deadline.IsZero() {
		return time.Now().Add(w.Timeout)
	}
	return w.Deadline
}

// kindOf names the sentinel err wraps; "" for none.
func kindOf(err error) string {
	for kind, sentinel := range kinds {
		if errors.Is(err, sentinel) {
			return kind
		}
	}
	return ""
}

// wireCauseOf is the cause of a program's context as the process sends
// it: its kind when it wraps a sentinel.
func wireCauseOf(cause error) *wireError {
	if cause == nil {
		return nil
	}
	return &wireError{Kind: kindOf(cause), Message: cause.Error()}
}

// wireErrorOf is err as the process sends it; nil for nil. An *Error that
// wraps no sentinel is the caller's cancellation (runner.failure).
func wireErrorOf(err error) *wireError {
	if err == nil {
		return nil
	}
	e, ok := errors.AsType[*Error](err)
	if !ok {
		return &wireError{Message: err.Error()}
	}
	return &wireError{Kind: cmp.Or(kindOf(e.Err), kindCancelled), Message: e.Message, Line: e.Line, Column: e.Column}
}

// err is w as Run returns it; ctx is Run's, whose cause a cancelled
// program's error wraps.
func (w *wireError) err(ctx context.Context) error {
	switch {
	case w == nil:
		return nil
	case w.Kind == "":
		return errors.New(w.Message)
	case w.Kind == kindCancelled:
		return &Error{Err: causeOf(ctx), Message: w.Message}
	case w.Kind == "thrown" && ctx.Err() != nil:
		// A call the cancellation ended rejected, and the program threw
		// before the child heard of the cancellation itself.
		return &Error{Err: causeOf(ctx), Message: "the program was cancelled: " + causeOf(ctx).Error()}
	}
	return &Error{Err: kinds[w.Kind], Message: w.Message, Line: w.Line, Column: w.Column}
}

// causeOf is ctx's cause, or context.Canceled when ctx has none yet.
func causeOf(ctx context.Context) error {
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	return context.Canceled
}
