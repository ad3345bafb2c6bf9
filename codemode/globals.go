package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/mcpbridge/mcpbridge/attach"
	"github.com/mcpbridge/mcpbridge/internal/textcut"
	"github.com/mcpbridge/mcpbridge/tool"
)

// install gives the program its globals: tools, console.log and sleep
// (JSON and the language's builtins are the engine's).
func (r *runner) install() error {
	tools := r.vm.NewObject()
	if err := tools.Set(callName, r.callByName); err != nil {
		return err
	}
	for _, s := range r.api.spaces {
		ns := r.vm.NewObject()
		for _, f := range s.funcs {
			if err := ns.Set(f.name, func(call goja.FunctionCall) goja.Value { return r.call(f, call.Argument(0)) }); err != nil {
				return err
			}
		}
		if err := tools.Set(s.name, ns); err != nil {
			return err
		}
	}
	console := r.vm.NewObject()
	for _, name := range []string{"log", "info", "warn", "error"} { // one stream: the model reads them alike
		if err := console.Set(name, r.log); err != nil {
			return err
		}
	}
	g := r.vm.GlobalObject()
	r.errorCtor = g.Get("Error") // before the program may replace it
	for name, v := range map[string]any{"tools": tools, "console": console, "sleep": r.sleep} {
		if err := g.Set(name, v); err != nil {
			return err
		}
	}
	return nil
}

// callByName is tools.call(publicName, args).
func (r *runner) callByName(call goja.FunctionCall) goja.Value {
	name := call.Argument(0).String()
	f := r.api.lookup(name)
	if f == nil && r.opts.CallUnlisted {
		f = &function{tool: tool.Tool{Name: name}} // the view says whether it exists
	}
	if f == nil {
		panic(r.vm.NewTypeError(fmt.Sprintf("unknown tool %q: this program may call only the tools of its declaration", name)))
	}
	return r.call(f, call.Argument(1))
}

// call starts one tool call and returns its promise, settled on the loop
// when the call returns. The call runs on its own goroutine through the
// View, in the program's context.
func (r *runner) call(f *function, argv goja.Value) goja.Value {
	if r.calls == r.opts.MaxCalls {
		r.halt(fmt.Errorf("%w: more than %d: batch the work into fewer calls", ErrCallLimit, r.opts.MaxCalls))
		p, _, _ := r.vm.NewPromise() // never settled: the VM stops at its next instruction
		return r.vm.ToValue(p)
	}
	args := json.RawMessage("{}")
	if !goja.IsUndefined(argv) && !goja.IsNull(argv) {
		args = json.RawMessage(r.stringify(argv))
	}
	r.calls++
	r.pending++
	p, resolve, reject := r.vm.NewPromise()
	name := f.tool.Name
	site := r.callSite()
	r.wg.Go(func() {
		res, err := r.invoke(name, args)
		if err == nil && r.opts.Attachments != nil {
			res = keepAttachments(r.ctx, r.opts.Attachments, res)
		}
		r.post(func() error {
			r.pending--
			if err != nil && res.Content == nil && !res.IsError {
				return reject(r.refusal(fmt.Sprintf("tool %q: %v", name, err), site))
			}
			return resolve(r.toolResult(res))
		})
	})
	return r.vm.ToValue(p)
}

// callSite is where the program made the call it is in, as a stack
// trace names a place of the wrapped source ("program.js:L:C"); "" when
// no frame of the program is near.
func (r *runner) callSite() string {
	for _, f := range r.vm.CaptureCallStack(4, nil) {
		if f.SrcName() == srcName {
			p := f.Position()
			return fmt.Sprintf("%s:%d:%d", srcName, p.Line, p.Column)
		}
	}
	return ""
}

// refusal is the Error a refused call's promise is rejected with: an
// ordinary Error of the language (not a GoError, which would name Go)
// whose stack is the call's place, so that uncaught it is reported at the
// program's line and column (thrown).
func (r *runner) refusal(msg, site string) goja.Value {
	obj, err := r.vm.New(r.errorCtor, r.vm.ToValue(msg))
	if err != nil {
		return r.vm.ToValue(msg) // untested: the kept constructor takes a message
	}
	if site != "" {
		_ = obj.DefineDataProperty("stack", r.vm.ToValue("Error: "+msg+"\n    at "+site), goja.FLAG_TRUE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	}
	return obj
}

// invoke runs one call through the view once a slot is free.
func (r *runner) invoke(name string, args json.RawMessage) (tool.Result, error) {
	select {
	case r.sem <- struct{}{}:
		defer func() { <-r.sem }()
	case <-r.ctx.Done():
		return r.view.Call(r.ctx, name, args) // cancelled: the view says so as it would for any call
	}
	return r.view.Call(r.ctx, name, args)
}

// keepAttachments stores the images and audio of res in store: its text
// names where each went (attach.Text), the blocks of its wire result hold
// the paths instead of the data (attach.Blocks). Runs on the call's
// goroutine, off the program's loop.
func keepAttachments(ctx context.Context, store attach.Store, res tool.Result) tool.Result {
	w, ok := wireParts(res.Wire)
	if !ok {
		return res
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(res.Wire, &members) != nil {
		return res // untested: wireParts decoded it
	}
	text := attach.Text(ctx, store, res)
	members["content"] = attach.Blocks(ctx, store, w.Content)
	wire, err := json.Marshal(members)
	if err != nil {
		return res // untested: members are JSON
	}
	res.Wire, res.Content = wire, []tool.Content{tool.Text(text)}
	return res
}

// stringify returns JSON.stringify(v), throwing what it throws.
func (r *runner) stringify(v goja.Value) string {
	s, err := r.jsonCall("stringify", v)
	if err != nil {
		panic(err)
	}
	if goja.IsUndefined(s) {
		return "null"
	}
	return s.String()
}

// jsonCall calls JSON[method](v), with the functions the sandbox kept
// before the program could replace them.
func (r *runner) jsonCall(method string, v goja.Value) (goja.Value, error) {
	if method == "parse" {
		return r.parseFn(goja.Undefined(), v)
	}
	return r.stringifyFn(goja.Undefined(), v)
}

// toolResult is what a call's promise resolves to:
// {text, structured, isError, content}. A source's wire result (an MCP
// server's) gives structuredContent and the content blocks as sent
// (images too); a Go tool's result gives its Value and its text blocks.
func (r *runner) toolResult(res tool.Result) goja.Value {
	o := r.vm.NewObject()
	// Own properties, as an object literal's: Set would run a setter the
	// program put on Object.prototype, outside any guard of the loop.
	set := func(name string, v any) {
		_ = o.DefineDataProperty(name, r.vm.ToValue(v), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
	}
	set("text", res.Text())
	set("isError", res.IsError)
	structured, content := res.Value, json.RawMessage(nil)
	if w, ok := wireParts(res.Wire); ok {
		structured, content = w.Structured, w.Content
	}
	if len(content) == 0 || content[0] != '[' {
		content, _ = json.Marshal(res.Content) // text blocks: cannot fail
	}
	set("structured", r.parse(structured))
	set("content", r.parse(content))
	return o
}

// wire is the part of an MCP tools/call result a program reads.
type wire struct {
	Content    json.RawMessage `json:"content"`
	Structured json.RawMessage `json:"structuredContent"`
}

// wireParts decodes a wire result, false when there is none.
func wireParts(raw json.RawMessage) (wire, bool) {
	var w wire
	if len(raw) == 0 || json.Unmarshal(raw, &w) != nil {
		return wire{}, false
	}
	return w, true
}

// parse returns JSON as a value of the VM, undefined for none.
func (r *runner) parse(b json.RawMessage) goja.Value {
	if len(b) == 0 {
		return goja.Undefined()
	}
	v, err := r.jsonCall("parse", r.vm.ToValue(string(b)))
	if err != nil {
		return goja.Undefined() // the registry checked it is JSON
	}
	return v
}

// log is console.log: its arguments, strings as they are and the rest
// as JSON, joined by spaces, kept while they fit MaxOutput.
func (r *runner) log(call goja.FunctionCall) goja.Value {
	parts := make([]string, len(call.Arguments))
	for i, a := range call.Arguments {
		if s, ok := a.(goja.String); ok {
			parts[i] = s.String()
			continue
		}
		s, err := r.jsonCall("stringify", a)
		if err != nil || goja.IsUndefined(s) {
			parts[i] = a.String()
		} else {
			parts[i] = s.String()
		}
	}
	r.keepLine(strings.Join(parts, " "))
	return goja.Undefined()
}

// keepLine adds a log line, cut where MaxOutput ends.
func (r *runner) keepLine(line string) {
	if r.cut {
		return
	}
	room := r.opts.MaxOutput - r.logged
	if len(line)+1 > room {
		line = textcut.Prefix(line, max(room-1, 0))
		r.cut = true
	}
	r.logs = append(r.logs, line)
	r.logged += len(line) + 1
}

// sleep is sleep(ms): a promise settled after ms milliseconds, or as
// soon as the program is stopped.
func (r *runner) sleep(call goja.FunctionCall) goja.Value {
	if r.sleeps == maxSleeps {
		panic(r.vm.NewTypeError(fmt.Sprintf("more than %d sleeps at once: await them", maxSleeps)))
	}
	d := time.Duration(max(call.Argument(0).ToInteger(), 0)) * time.Millisecond
	d = min(d, r.opts.Timeout)
	r.sleeps++
	r.pending++
	p, resolve, _ := r.vm.NewPromise()
	r.wg.Go(func() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.ctx.Done():
		}
		r.post(func() error {
			r.sleeps--
			r.pending--
			return resolve(goja.Undefined())
		})
	})
	return r.vm.ToValue(p)
}

// keep records the program's return value as JSON.
func (r *runner) keep(v goja.Value) error {
	s, err := r.jsonCall("stringify", v)
	if err != nil {
		msg := err.Error()
		if ex, ok := err.(*goja.Exception); ok {
			msg = ex.Value().String()
		}
		return &Error{Err: ErrResult, Message: "the return value cannot be sent as JSON (" + msg + "): return plain data, without cycles"}
	}
	if goja.IsUndefined(s) {
		return nil
	}
	if n := len(s.String()); n > r.opts.MaxOutput {
		return &Error{Err: ErrOutputLimit, Message: fmt.Sprintf("%v: the return value is %d bytes; the limit is %d: return only what is needed",
			ErrOutputLimit, n, r.opts.MaxOutput)}
	}
	r.value = json.RawMessage(s.String())
	return nil
}
