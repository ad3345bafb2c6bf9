package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"

	"github.com/mcpbridge/mcpbridge/attach"
	"github.com/mcpbridge/mcpbridge/tool"
)

// View is what a program may call: the tools it lists, through the call
// path it gives. Call is the consumer's ordinary call path (a registry's
// Execute, a gateway's gated call), run with the program's caller's
// context, so whatever applies to a direct call applies to each inner one.
// Both must be safe for concurrent use.
type View interface {
	Tools() ([]tool.Tool, error)
	Call(ctx context.Context, name string, args json.RawMessage) (tool.Result, error)
}

// CallerView is a View whose tools depend on who calls: a gateway's,
// which shows each caller only what its policy lets it see. Code mode
// asks it with ToolsFor and the context of the call that runs the
// program (or describes the API) instead of Tools.
type CallerView interface {
	View
	ToolsFor(ctx context.Context) ([]tool.Tool, error)
}

// toolsOf returns the tools view lists to the caller of ctx.
func toolsOf(ctx context.Context, view View) ([]tool.Tool, error) {
	if cv, ok := view.(CallerView); ok {
		return cv.ToolsFor(ctx)
	}
	return view.Tools()
}

// RegistryView returns reg as a View: every tool it lists, called with
// Registry.Execute.
func RegistryView(reg *tool.Registry) View { return registryView{reg} }

type registryView struct{ reg *tool.Registry }

func (v registryView) Tools() ([]tool.Tool, error) { return v.reg.List(), nil }

func (v registryView) Call(ctx context.Context, name string, args json.RawMessage) (tool.Result, error) {
	return v.reg.Execute(ctx, name, args)
}

// Defaults of Options.
const (
	DefaultTimeout       = 30 * time.Second
	DefaultMaxCalls      = 200
	DefaultMaxConcurrent = 8
	DefaultMaxOutput     = 64 << 10
	DefaultMaxMemory     = 256 << 20
	// maxSleeps bounds the sleeps pending at once, each a goroutine.
	maxSleeps = 64
)

// Options bound a program. The zero value of each field is its default;
// Run does not change them.
type Options struct {
	// Timeout bounds the program's wall time, inner calls and its wait
	// for a process (ErrBusy) included; 0: DefaultTimeout.
	Timeout time.Duration
	// MaxCalls bounds the tool calls of one program; 0: DefaultMaxCalls.
	MaxCalls int
	// MaxConcurrent bounds the calls in flight at once; more wait their
	// turn; 0: DefaultMaxConcurrent.
	MaxConcurrent int
	// MaxOutput bounds, in bytes, the logs kept (the rest is cut) and the
	// return value (a larger one fails the program); 0: DefaultMaxOutput.
	MaxOutput int
	// MaxMemory bounds, in bytes, how much the heap may grow while the
	// program runs; a sixteenth of it bounds the length of any one string
	// or array a builtin works on. 0: DefaultMaxMemory. See
	// docs/codemode.md for how far this holds.
	MaxMemory int64
	// API is the view's API when the caller has it already (NewAPI of the
	// view's tools); nil: Run builds it.
	API *API
	// CallUnlisted passes tools.call of a name the declaration does not
	// have to the view, whose Call answers it: a gateway's, whose Gate
	// records the attempt and answers a tool hidden from the caller as
	// unknown, as it does a direct call. false: code mode refuses it as
	// an unknown tool without calling the view.
	CallUnlisted bool
	// Attachments, when set, keeps the images and audio of the results a
	// program reads: each such block of a result's content is stored
	// there and read as {type, mimeType, saved: where} (attach.Blocks),
	// and its text names it ("[image saved: PATH (…)]"), so that a
	// program passes on a path, not kilobytes of base64. nil: the blocks
	// as the source sent them.
	Attachments attach.Store
}

func (o Options) withDefaults() Options {
	o.Timeout = orDefault(o.Timeout, DefaultTimeout)
	o.MaxCalls = orDefault(o.MaxCalls, DefaultMaxCalls)
	o.MaxConcurrent = orDefault(o.MaxConcurrent, DefaultMaxConcurrent)
	o.MaxOutput = orDefault(o.MaxOutput, DefaultMaxOutput)
	o.MaxMemory = orDefault(o.MaxMemory, DefaultMaxMemory)
	return o
}

func orDefault[T int | int64 | time.Duration](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}

// Result is what a program produced.
type Result struct {
	// Value is the program's return value as JSON; nil when it returned
	// nothing (undefined).
	Value json.RawMessage `json:"value,omitempty"`
	// Logs are its console.log lines, in order, cut at Options.MaxOutput.
	Logs []string `json:"logs,omitempty"`
	// Truncated reports that logs were cut.
	Truncated bool `json:"truncated,omitempty"`
	// Calls counts the tool calls it made.
	Calls int `json:"calls"`
}

// Text is the result as a model reads it: the logs, then the return
// value.
func (r Result) Text() string {
	var b strings.Builder
	for _, l := range r.Logs {
		b.WriteString(l + "\n")
	}
	if r.Truncated {
		b.WriteString("[output cut: log less, or return only what you need]\n")
	}
	if r.Value != nil {
		b.WriteString(string(r.Value))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Run runs program against view and returns what it returned and
// logged. program is JavaScript, the body of an async function: it may
// await and return. The error is an *Error for a program that failed
// (with the logs so far in the Result); or the error of view.Tools.
//
// Run returns once every inner call has returned: when the program ends
// or fails, the calls still in flight see their context cancelled.
func Run(ctx context.Context, view View, program string, opts Options) (Result, error) {
	opts = opts.withDefaults()
	api := opts.API
	if api == nil {
		tools, err := toolsOf(ctx, view)
		if err != nil {
			return Result{}, fmt.Errorf("code mode: list the tools: %w", err)
		}
		api = NewAPI(tools)
	}
	// Not even parsed here: goja's parser recurses once per nesting level
	// without a bound, and a stack overflow is fatal to the whole process
	// (a million "(" took the gateway down). The program's process
	// parses it, under its own stack bound (child.go).
	return runIsolated(ctx, view, api, program, opts)
}

// runHere runs program in this process until end at the latest: what a
// program's process does (child.go), with view its pipe to Run.
func runHere(ctx context.Context, view View, api *API, program string, opts Options, end time.Time) (Result, error) {
	boundRegexpMatches()
	prg, err := compile(program)
	if err != nil {
		return Result{}, err
	}
	r, err := newRunner(ctx, view, api, opts, end)
	if err != nil {
		return Result{}, err
	}
	defer r.close()
	err = r.run(prg)
	return r.result(), err
}

// runner is one program's run. Its fields are used on the goroutine that
// called Run (the VM's loop) only, but for those under mu and the ones
// its goroutines only read.
type runner struct {
	vm     *goja.Runtime
	view   View
	api    *API
	opts   Options
	maxLen int64

	parent context.Context         // the caller's
	ctx    context.Context         // ends with the program; its calls run in it
	stop   context.CancelCauseFunc // ends ctx
	done   func()                  // releases the time limit
	wg     sync.WaitGroup          // the goroutines of calls, sleeps and the watchdog
	sem    chan struct{}           // calls in flight

	mu    sync.Mutex
	queue []func() error // settlements to run on the loop; guarded by mu
	wake  chan struct{}  // a value when queue grew

	pending int // calls and sleeps not settled yet
	sleeps  int // sleeps pending
	calls   int
	logs    []string
	logged  int // bytes of logs
	cut     bool
	value   json.RawMessage

	stringifyFn, parseFn goja.Callable // the sandbox's JSON, kept before the program runs
	errorCtor            goja.Value    // the language's Error, kept likewise (refusal)
}

// newRunner sets up a run that ends at end, or sooner as opts bound it.
func newRunner(parent context.Context, view View, api *API, opts Options, end time.Time) (*runner, error) {
	r := &runner{
		vm: goja.New(), view: view, api: api, opts: opts, maxLen: opts.MaxMemory / 16,
		parent: parent, sem: make(chan struct{}, opts.MaxConcurrent), wake: make(chan struct{}, 1),
	}
	timed, done := context.WithDeadlineCause(parent, end,
		timeLimit(opts.Timeout, ": make fewer or faster calls, or do less per program"))
	r.ctx, r.stop = context.WithCancelCause(timed)
	stopInterrupt := context.AfterFunc(r.ctx, func() { r.vm.Interrupt(context.Cause(r.ctx)) })
	r.done = func() { stopInterrupt(); done() }
	if err := r.harden(); err != nil {
		r.close()
		return nil, fmt.Errorf("code mode: set up the sandbox: %w", err)
	}
	if err := r.install(); err != nil {
		r.close()
		return nil, fmt.Errorf("code mode: set up the sandbox: %w", err)
	}
	r.wg.Go(func() {
		watchMemory(r.ctx, uint64(opts.MaxMemory), func() {
			r.halt(fmt.Errorf("%w: the heap grew by more than %d MiB: keep less in memory (filter results as they come)",
				ErrMemoryLimit, opts.MaxMemory>>20))
		})
	})
	return r, nil
}

// halt ends the program with cause: the VM stops at its next instruction
// and every call in flight sees its context cancelled.
func (r *runner) halt(cause error) {
	r.stop(cause)
	r.vm.Interrupt(cause)
}

// close ends everything the run started and waits for it.
func (r *runner) close() {
	r.done()
	r.stop(context.Canceled)
	r.wg.Wait()
}

// run runs the compiled program and its event loop until its promise
// settles or the program is stopped.
func (r *runner) run(prg *goja.Program) error {
	v, err := r.vm.RunProgram(prg)
	if err != nil {
		return r.failure(err)
	}
	p, ok := v.Export().(*goja.Promise)
	if !ok {
		// The program closed the async function it is the body of
		// ("}), 1; (function(){"): what ran was not that function.
		return &Error{Err: ErrSyntax, Message: "syntax error: the program closes the function it is the body of (an unmatched \"}\" at its top level)" + syntaxHint}
	}
	for p.State() == goja.PromiseStatePending {
		job, err := r.next()
		if err != nil {
			return r.failure(err)
		}
		if err := job(); err != nil {
			return r.failure(err)
		}
	}
	if p.State() == goja.PromiseStateRejected {
		return thrown(p.Result())
	}
	return r.keep(p.Result())
}

// next waits for the next settlement to run on the loop.
func (r *runner) next() (func() error, error) {
	for {
		r.mu.Lock()
		if len(r.queue) > 0 {
			job := r.queue[0]
			r.queue = r.queue[1:]
			r.mu.Unlock()
			return job, nil
		}
		r.mu.Unlock()
		if r.pending == 0 {
			return nil, &Error{Err: ErrStalled, Message: "the program awaits a promise that no call or sleep will settle"}
		}
		select {
		case <-r.wake:
		case <-r.ctx.Done():
			return nil, context.Cause(r.ctx)
		}
	}
}

// post queues job to run on the loop; safe from any goroutine.
func (r *runner) post(job func() error) {
	r.mu.Lock()
	r.queue = append(r.queue, job)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// failure turns what stopped the program into its error.
func (r *runner) failure(err error) error {
	if ie, ok := errors.AsType[*goja.InterruptedError](err); ok {
		if cause, ok := ie.Value().(error); ok {
			err = cause
		}
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	if ex, ok := errors.AsType[*goja.Exception](err); ok {
		e := thrown(ex.Value())
		if e.Line == 0 {
			e.Line, e.Column = exceptionPos(ex.Stack())
		}
		return e
	}
	if so, ok := errors.AsType[*goja.StackOverflowError](err); ok {
		e := &Error{Err: ErrThrown, Message: fmt.Sprintf("calls nested deeper than %d: %v", maxStack, so)}
		e.Line, e.Column = exceptionPos(so.Stack())
		return e
	}
	for _, limit := range []error{ErrTimeLimit, ErrCallLimit, ErrMemoryLimit} {
		if errors.Is(err, limit) {
			return &Error{Err: limit, Message: err.Error()}
		}
	}
	if r.parent.Err() != nil {
		return &Error{Err: context.Cause(r.parent), Message: "the program was cancelled: " + context.Cause(r.parent).Error()}
	}
	return &Error{Err: ErrThrown, Message: err.Error()}
}

// result returns what the program produced so far.
func (r *runner) result() Result {
	return Result{Value: r.value, Logs: r.logs, Truncated: r.cut, Calls: r.calls}
}
