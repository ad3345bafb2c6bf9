package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/mcpbridge/mcpbridge/internal/projection"
	"github.com/mcpbridge/mcpbridge/internal/redact"
	"github.com/mcpbridge/mcpbridge/internal/tasks"
	"github.com/mcpbridge/mcpbridge/internal/textcut"
	"github.com/mcpbridge/mcpbridge/tool"
)

// imageReason is why an image cannot enter the model view: this bridge has
// no attachment store (docs/decisions.md §6).
const imageReason = "no attachment store is mounted"

var (
	errCallTimeout = errors.New("tool call timed out")
	errCallDone    = errors.New("tool call done")
)

// timeoutError is a call that ran out of toolCallTimeoutMs: its text is
// the model's, and it wraps context.DeadlineExceeded so the registry marks
// the result tool.CodeTimeout (metrics count timeouts apart).
type timeoutError struct{ msg string }

func (e *timeoutError) Error() string { return e.msg }
func (e *timeoutError) Unwrap() error { return context.DeadlineExceeded }

// current returns the live generation, or an error saying at once why there
// is none (docs/decisions.md §4: calls to a down server never wait for a timeout).
func (s *Server) current() (*generation, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.cur != nil && !s.cur.ended() {
		return s.cur, nil
	}
	name := s.cfg.ServerName
	if s.status.State == StateReconnecting {
		return nil, fmt.Errorf("server %q is reconnecting (attempt %d/%d)", name, s.status.Attempt, s.status.MaxAttempts)
	}
	if s.status.Err != "" {
		return nil, fmt.Errorf("server %q is not connected: %s", name, s.status.Err)
	}
	return nil, fmt.Errorf("server %q is not connected", name)
}

// caller returns the body of one registered tool. It always sends the raw
// name, never the public one. Every call counts as in flight (see Drain)
// until it returns.
func (s *Server) caller(rt *remoteTool) tool.Func {
	return func(ctx context.Context, args json.RawMessage) (tool.Output, error) {
		s.inflight.enter()
		defer s.inflight.leave()
		if session := tool.SessionFrom(ctx); session != nil && s.cfg.Share == ShareSession {
			return s.callInSession(ctx, session, rt, args)
		}
		cl := s.callers.enter(ctx)
		defer s.callers.leave(cl)
		defer s.logs.report(s.log)
		ctx, end := s.trace(cl, OpCall, rt.raw)
		out, err := s.execute(ctx, rt, args)
		end(err)
		return out, err
	}
}

// execute is the body of rt's tool: the call and its result mapping.
func (s *Server) execute(ctx context.Context, rt *remoteTool, args json.RawMessage) (tool.Output, error) {
	gen, err := s.current()
	if err != nil {
		return tool.Output{}, err
	}
	call := s.call
	switch id := tool.ResumeFrom(ctx); {
	case id != "": // whatever its taskSupport: under the extension, any call may become a task
		call = s.resumeTask(id)
	case rt.taskRequired && s.callerWithoutTasks(ctx, gen):
		// Sent as the caller's alone, without the extension the bridge
		// would declare to follow the task: the server refuses it
		// (-32021) as it refuses the caller itself.
		ctx = context.WithValue(ctx, callerAloneKey{}, true)
	case serverDecidesTasks(gen):
		// Under the extension the server makes a task of the call or
		// not, maybe after rounds of input-required results (which the
		// plain call's loop answers), and call follows the task it makes.
	case rt.taskRequired || rt.taskOptional && tool.BackgroundFrom(ctx):
		call = s.callTask
	}
	raw, err := call(ctx, gen, rt.raw, objectArgs(args))
	if err != nil {
		return tool.Output{}, s.hintOldAsk(gen, s.hintRetries(err))
	}
	if tool.ForwardsFrom(ctx) == rt.public {
		if out, done, err := s.wireOnly(rt, raw); done {
			return out, err
		}
	}
	return s.project(gen, rt, raw)
}

// wireOnly is the Output of a result its consumer forwards as it came
// (tool.ForwardsFrom): Wire alone, checked as project checks it, without
// the model view no one reads (the projection is most of the bridge's
// own time a call). done is false for an error result, which project
// maps: the rare path keeps its one mapping.
func (s *Server) wireOnly(rt *remoteTool, raw json.RawMessage) (out tool.Output, done bool, err error) {
	head, err := projection.Inspect(raw)
	if err != nil {
		return tool.Output{}, true, s.invalidResult(err)
	}
	if head.IsError {
		return tool.Output{}, false, nil
	}
	if err := rt.checkOutput(head.StructuredContent, head.HasStructured); err != nil {
		return tool.Output{}, true, err
	}
	return tool.Output{Wire: raw}, true, nil
}

// project maps raw to the Output every consumer can read: the model
// view, the canonical value and the wire result.
func (s *Server) project(gen *generation, rt *remoteTool, raw json.RawMessage) (tool.Output, error) {
	p, err := projection.Project(raw, projection.Options{RawName: rt.raw, ImageReason: imageReason})
	if err != nil {
		return tool.Output{}, s.invalidResult(err)
	}
	if p.IsError {
		return tool.Output{}, s.hintOldAsk(gen, &tool.ToolError{Message: gen.withDenial(p.Text), Wire: raw})
	}
	if err := rt.checkOutput(p.StructuredContent, p.HasStructured); err != nil {
		return tool.Output{}, err
	}
	content := make([]tool.Content, len(p.Blocks))
	for i, b := range p.Blocks {
		content[i] = tool.Text(b)
	}
	return tool.Output{Content: content, Value: p.Value, Wire: raw}, nil
}

// invalidResult is the error of a result that is not a tools/call result.
func (s *Server) invalidResult(err error) error {
	return fmt.Errorf("server %q returned an invalid tools/call result: %w", s.cfg.ServerName, err)
}

// checkOutput checks a result's structuredContent against rt's
// outputSchema, when it has one.
func (rt *remoteTool) checkOutput(structured json.RawMessage, present bool) error {
	if rt.output == nil {
		return nil
	}
	if err := rt.output.check(structured, present); err != nil {
		return fmt.Errorf("tool %q returned invalid output: %w", rt.public, err)
	}
	return nil
}

// Drain waits until no call is in flight on the server, or ctx ends (then
// it returns ctx's error). A host calls it on an instance whose tools a
// replacement has taken over, before Close, which would cut the calls off:
// no new call reaches the server then, so the wait ends with the last
// call. Drain does not stop anything; calls that arrive meanwhile are
// waited for too. Safe for concurrent use, any number of times.
func (s *Server) Drain(ctx context.Context) error {
	return s.inflight.wait(ctx)
}

// inflight counts the calls in flight; wait waits until there are none.
// A call only touches the counter: the lock is taken when a waiter may
// have to be woken.
type inflight struct {
	n    atomic.Int64
	mu   sync.Mutex
	idle chan struct{} // closed when n drops to 0; nil when no one waits
}

func (f *inflight) enter() { f.n.Add(1) }

func (f *inflight) leave() {
	if f.n.Add(-1) != 0 {
		return
	}
	f.mu.Lock()
	if f.idle != nil {
		close(f.idle)
		f.idle = nil
	}
	f.mu.Unlock()
}

func (f *inflight) wait(ctx context.Context) error {
	f.mu.Lock()
	if f.idle == nil {
		f.idle = make(chan struct{})
	}
	idle := f.idle
	// Checked after idle is set: a call that leaves from now on, as the
	// last one, takes the lock after this and closes idle.
	busy := f.n.Load() != 0
	f.mu.Unlock()
	if !busy {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// call sends tools/call on gen and returns the raw result. The call ends
// with the caller's context, toolCallTimeoutMs, or the connection.
func (s *Server) call(ctx context.Context, gen *generation, rawName string, args json.RawMessage) (json.RawMessage, error) {
	callCtx, booked := s.callContext(ctx, gen)
	defer booked.leave()
	slot := &captureSlot{replace: true}
	params := &mcp.CallToolParams{Name: rawName, Arguments: args, Meta: s.withCallerMeta(ctx, gen, s.withTraceMeta(ctx, s.requestMeta(gen)))}
	if fn := tool.ProgressFrom(ctx); fn != nil {
		tok, done := gen.progress.add(fn)
		defer done()
		params.SetProgressToken(tok)
	}
	capCtx := withCapture(callCtx, slot)
	markCall(ctx, slot.slot)
	_, err := gen.session.CallTool(capCtx, params)
	gen.table.forget(slot)
	if captured(err) {
		err = nil // the slot holds the result, or says why not
	}
	if err != nil {
		return nil, s.callFailed(ctx, callCtx, gen, rawName, err)
	}
	if err := slot.refused(); err != nil {
		return nil, fmt.Errorf("server %q: %w", s.cfg.ServerName, err)
	}
	raw, ok := slot.result()
	if !ok {
		return nil, fmt.Errorf("server %q: tools/call result was not captured", s.cfg.ServerName)
	}
	if tasks.IsExtensionTask(raw) {
		// Under the tasks extension (2026-07-28) the server decides per
		// call whether it becomes a task.
		return s.followTask(ctx, callCtx, gen, rawName, raw)
	}
	return raw, nil
}

// callContext returns the one context for the three ways a call ends (the
// caller, toolCallTimeoutMs, the generation), and its booking, whose leave
// releases it: gen's book (callbook.go) times out and ends all its calls,
// so a call adds one cancelCtx to the caller's context and nothing else.
func (s *Server) callContext(ctx context.Context, gen *generation) (context.Context, *bookedCall) {
	callCtx, cancel := context.WithCancelCause(ctx)
	return callCtx, gen.calls.enter(cancel)
}

// cancelled says why the caller ended a call in words, not Go's: a
// deadline or a cancellation of the caller's, or the cause it gave.
// errors.Is still finds the cause.
func cancelled(cause error) error {
	switch {
	case errors.Is(cause, context.DeadlineExceeded):
		return fmt.Errorf("tool call cancelled: the caller's time limit passed%w", quiet{cause})
	case errors.Is(cause, context.Canceled):
		return fmt.Errorf("tool call cancelled by the caller%w", quiet{cause})
	}
	return fmt.Errorf("tool call cancelled: %w", cause)
}

// quiet wraps an error for errors.Is and As without adding to the message.
type quiet struct{ err error }

func (q quiet) Error() string { return "" }
func (q quiet) Unwrap() error { return q.err }

// callFailed says why a tools/call of rawName on gen failed with err:
// the caller's cancellation, toolCallTimeoutMs, the server closing, a
// JSON-RPC error, or the connection lost under it.
func (s *Server) callFailed(ctx, callCtx context.Context, gen *generation, rawName string, err error) error {
	switch cause := context.Cause(callCtx); {
	case ctx.Err() != nil:
		gen.table.ExpectCancel() // the SDK tells the server on a goroutine of its own
		return cancelled(context.Cause(ctx))
	case errors.Is(cause, errCallTimeout):
		gen.table.ExpectCancel()
		return &timeoutError{fmt.Sprintf("server %q did not answer tools/call %q within toolCallTimeoutMs (%dms)", s.cfg.ServerName, rawName, s.cfg.ToolCallTimeout.Milliseconds())}
	case errors.Is(cause, errServerClosing):
		return fmt.Errorf("server %q is closing", s.cfg.ServerName)
	}
	var wire *jsonrpc.Error
	if errors.As(err, &wire) {
		return describeCallError(err)
	}
	// Anything else is the transport failing under the call: the
	// session ends a moment later, and then says why (for stdio, the
	// child's exit status). When the bridge itself ended the
	// generation (an HTTP connection found lost), the SDK reports only
	// a cancellation: the generation knows the reason.
	if gen.ctx.Err() != nil {
		err = context.Cause(gen.ctx)
	}
	select {
	case <-gen.done:
	case <-time.After(time.Second):
		return fmt.Errorf("server %q: %w", s.cfg.ServerName, redact.Error(err))
	}
	if connectionGone(err) {
		err = gen.err
	}
	return fmt.Errorf("server %q connection lost during the call: %w", s.cfg.ServerName, redact.Error(err))
}

// connectionGone reports whether err only says that the connection ended,
// without saying why.
func connectionGone(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed)
}

// objectArgs forwards a JSON object as is and replaces anything else (null,
// a string, a number, an array) by {} so the server reports its own
// missing-parameter error; MCP requires an object (docs/upstream.md §4.2, §9.2 #11).
func objectArgs(args json.RawMessage) json.RawMessage {
	if isJSONObject(args) {
		return args
	}
	return json.RawMessage(`{}`)
}

// describeCallError renders a JSON-RPC error as the TypeScript SDK does
// ("MCP error -32602: …"), so model-visible texts match upstream.
//
// The SDK's own "rejected by transport" (-32005), which it wraps around the
// failure of an HTTP request beneath it (a response over the frame limit, a
// refused connection), keeps that failure's text: alone it says nothing.
func describeCallError(err error) error {
	var wire *jsonrpc.Error
	if !errors.As(err, &wire) {
		return err
	}
	if wire.Code == codeRejectedByTransport && wire.Message == "rejected by transport" && err.Error() != wire.Error() {
		return fmt.Errorf("MCP error %d: request rejected by the HTTP transport: %w", wire.Code, redact.Error(err))
	}
	prefix := fmt.Sprintf("MCP error %d: ", wire.Code)
	text := wire.Message
	if !strings.HasPrefix(text, prefix) {
		// A TypeScript server's McpError puts the prefix in the message
		// it sends already.
		text = prefix + text
	}
	// Cut: the text is logged, kept in Status and shown, maybe at every
	// re-sync. The error as sent stays whole for a gateway to forward.
	return &serverError{textcut.Peer(text), wire}
}

// serverError is a JSON-RPC error the server answered a request with:
// its text as describeCallError renders it, and the error as sent, which
// a gateway forwards (errors.As finds it).
type serverError struct {
	text string
	wire *jsonrpc.Error
}

func (e *serverError) Error() string { return e.text }

// Unwrap returns the error as the server sent it.
func (e *serverError) Unwrap() error { return e.wire }

// codeRejectedByTransport is the code of the go-sdk's jsonrpc2.ErrRejected.
const codeRejectedByTransport = -32005

// outputValidator checks structuredContent against a tool's outputSchema
// with a full JSON Schema validator (drafts 4 to 2020-12). The schema is
// compiled on first use; one that does not compile is reported once and
// treated as "any JSON" (docs/decisions.md §6).
type outputValidator struct {
	schema  json.RawMessage
	onError func(error)

	once     sync.Once
	compiled *jsonschema.Schema
}

func newOutputValidator(schema json.RawMessage, onError func(error)) *outputValidator {
	return &outputValidator{schema: schema, onError: onError}
}

func (v *outputValidator) compile() {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(v.schema))
	if err == nil {
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		const url = "mcp:///outputSchema.json"
		if err = c.AddResource(url, doc); err == nil {
			v.compiled, err = c.Compile(url)
		}
	}
	if err != nil {
		v.onError(err)
	}
}

func (v *outputValidator) check(structured json.RawMessage, present bool) error {
	v.once.Do(v.compile)
	if v.compiled == nil {
		return nil
	}
	if !present {
		return errors.New("structuredContent is missing, but the tool declares an outputSchema")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(structured))
	if err != nil {
		return fmt.Errorf("structuredContent is not valid JSON: %w", err)
	}
	err = v.compiled.Validate(inst)
	var verr *jsonschema.ValidationError
	if errors.As(err, &verr) {
		return errors.New(describeViolations(verr))
	}
	return err
}

var englishPrinter = message.NewPrinter(language.English)

// describeViolations lists the leaf violations as
// "structuredContent.answer: got string, want integer".
func describeViolations(e *jsonschema.ValidationError) string {
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			path := "structuredContent"
			for _, p := range e.InstanceLocation {
				path += "." + p
			}
			out = append(out, path+": "+e.ErrorKind.LocalizedString(englishPrinter))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(e)
	return strings.Join(out, "; ")
}
