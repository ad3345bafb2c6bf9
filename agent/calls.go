package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mcpbridge/mcpbridge/tool"
)

// Call is one tool call of the model, as an Approver sees it.
type Call struct {
	ID   string
	Name string
	Args json.RawMessage
	// Tool is the registered tool (Name empty when none has the name).
	Tool tool.Tool
}

// Approver decides whether a call runs. An error ends the turn (the
// person cancelled, say); false sends the model a refusal.
type Approver interface {
	Approve(ctx context.Context, c Call) (bool, error)
}

// deniedText is what the model reads of a call the person refused.
const deniedText = "Error: the user denied this tool call. Do not call it again unless the user asks; answer with what you have."

// outcome is one call's result, as sent back.
type outcome struct {
	text    string
	isError bool
	denied  bool
	spilled string
	settled bool // decided without running: denied, or no such tool
}

// runCalls asks approval for each call in order, runs the approved ones
// concurrently, and adds their results in the calls' order. A failed
// approval (ctx ended) still adds a result for every call, so the
// conversation stays one the API accepts.
func (a *Agent) runCalls(ctx context.Context, calls []ToolCall) error {
	out := make([]outcome, len(calls))
	approved := make([]Call, len(calls))
	var approveErr error
	for i, tc := range calls {
		c := Call{ID: tc.ID, Name: tc.Function.Name, Args: args(tc.Function.Arguments)}
		c.Tool, _ = a.opts.Registry.Get(c.Name)
		a.emit(Event{Type: EventToolCall, ID: c.ID, Name: c.Name, Arguments: jsonOrString(c.Args)})
		if c.Tool.Name == "" {
			out[i] = a.unknown(c.Name)
			continue
		}
		if err := tool.CheckArguments(c.Args); err != nil {
			// Not asked about: it cannot run, whatever the answer.
			out[i] = outcome{text: "Error: " + err.Error(), isError: true, settled: true}
			continue
		}
		ok := approveErr == nil
		if ok && a.opts.Approver != nil {
			ok, approveErr = a.opts.Approver.Approve(ctx, c)
			ok = ok && approveErr == nil
		}
		if !ok {
			out[i] = outcome{text: deniedText, isError: true, denied: true, settled: true}
			continue
		}
		approved[i] = c
	}
	var wg sync.WaitGroup
	for i := range calls {
		if out[i].settled || approveErr != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = a.call(ctx, approved[i])
		}()
	}
	wg.Wait()
	for i, tc := range calls {
		if out[i].settled {
			a.emit(Event{Type: EventToolResult, ID: tc.ID, Name: tc.Function.Name, Text: out[i].text, IsError: true, Denied: out[i].denied})
		}
		if err := a.add(Message{Role: "tool", ToolCallID: tc.ID, Content: out[i].text}); err != nil {
			return err
		}
	}
	return approveErr
}

// unknown is the result of a call of a name no tool has. It is neither
// asked about (an "always" answer to mcp__github would be kept as every
// tool of github) nor run (a tool registered meanwhile would run
// unapproved); the model reads what Execute would have said.
func (a *Agent) unknown(name string) outcome {
	var err error = fmt.Errorf("%w %q", tool.ErrNotFound, name)
	if why, ok := a.opts.Registry.Withheld(name); ok {
		err = &tool.WithheldError{Name: name, Why: why}
	}
	return outcome{text: "Error: " + err.Error(), isError: true, settled: true}
}

// call runs one approved call and reports its result.
func (a *Agent) call(ctx context.Context, c Call) outcome {
	cctx := ctx
	if a.opts.CallContext != nil {
		cctx = a.opts.CallContext(ctx, c)
	}
	start := a.now()
	res, _ := a.opts.Registry.Execute(cctx, c.Name, c.Args) // an unknown name is a result too
	o := outcome{text: res.Text(), isError: res.IsError}
	o.text, o.spilled = a.capResult(c, o.text)
	a.emit(Event{Type: EventToolResult, ID: c.ID, Name: c.Name, Text: o.text, IsError: o.isError,
		DurationMs: a.now().Sub(start).Milliseconds(), Spilled: o.spilled})
	return o
}

// jsonOrString is a call's arguments for an event: as they are when JSON,
// else as a JSON string (the model may write anything).
func jsonOrString(b json.RawMessage) json.RawMessage {
	if json.Valid(b) {
		return b
	}
	s, _ := json.Marshal(string(b))
	return s
}
