package codemode_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/codemode"
	"github.com/mcpbridge/mcpbridge/tool"
)

// fixture is a registry of Go tools a program calls: add, echo, count,
// hang (waits for its context) and secret.
type fixture struct {
	reg      *tool.Registry
	counted  atomic.Int64  // calls of count
	started  chan struct{} // a value per hang call started
	hungDone atomic.Int64  // hang calls that saw their context end
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{reg: tool.NewRegistry(), started: make(chan struct{}, 16)}
	src := f.reg.NewSource()
	t.Cleanup(src.Close)
	err := src.Publish(
		goTool("mcp__calc__add", "Adds a and b.", `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`,
			func(_ context.Context, args json.RawMessage) (tool.Output, error) {
				var in struct{ A, B float64 }
				if err := json.Unmarshal(args, &in); err != nil {
					return tool.Output{}, err
				}
				sum, _ := json.Marshal(map[string]float64{"sum": in.A + in.B})
				return tool.Output{Content: []tool.Content{tool.Text(fmt.Sprint(in.A + in.B))}, Value: sum}, nil
			}),
		goTool("mcp__text__echo", "Echoes its arguments.", ``, func(_ context.Context, args json.RawMessage) (tool.Output, error) {
			return tool.Output{Content: []tool.Content{tool.Text(string(args))}}, nil
		}),
		goTool("mcp__text__count", "Counts its calls.", ``, func(context.Context, json.RawMessage) (tool.Output, error) {
			f.counted.Add(1)
			return tool.Output{Content: []tool.Content{tool.Text("ok")}}, nil
		}),
		goTool("mcp__slow__hang", "Waits until cancelled.", ``, func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
			f.started <- struct{}{}
			<-ctx.Done()
			f.hungDone.Add(1)
			return tool.Output{}, ctx.Err()
		}),
		goTool("mcp__vault__secret", "Tells a secret.", ``, func(context.Context, json.RawMessage) (tool.Output, error) {
			return tool.Output{Content: []tool.Content{tool.Text("the secret")}}, nil
		}),
	)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func goTool(name, desc, schema string, body tool.Func) tool.Tool {
	server := strings.Split(name, "__")[1]
	t := tool.Tool{Name: name, Description: desc, Execute: body, Origin: tool.Origin{Server: server, Name: strings.Split(name, "__")[2]}}
	if schema != "" {
		t.InputSchema = json.RawMessage(schema)
	}
	return t
}

// run runs program over the whole registry.
func (f *fixture) run(t *testing.T, program string, opts codemode.Options) (codemode.Result, error) {
	t.Helper()
	return codemode.Run(t.Context(), codemode.RegistryView(f.reg), program, opts)
}

// wantError asserts err is an *Error wrapping want whose message holds
// each of parts, and returns it.
func wantError(t *testing.T, err, want error, parts ...string) *codemode.Error {
	t.Helper()
	e, ok := errors.AsType[*codemode.Error](err)
	if !ok || !errors.Is(err, want) {
		t.Fatalf("error = %v (%T), want a *codemode.Error wrapping %v", err, err, want)
	}
	for _, p := range parts {
		if !strings.Contains(e.Error(), p) {
			t.Errorf("error %q does not say %q", e.Error(), p)
		}
	}
	return e
}

func TestRunChainsCallsAndReturnsJSON(t *testing.T) {
	f := newFixture(t)
	res, err := f.run(t, `
const [x, y] = await Promise.all([tools.calc.add({a: 1, b: 2}), tools.call("mcp__calc__add", {a: 10, b: 20})]);
console.log("sums", x.text, y.structured.sum);
const e = await tools.text.echo({hello: "world"});
return {total: x.structured.sum + y.structured.sum, echoed: JSON.parse(e.text), isError: e.isError, blocks: e.content.length};
`, codemode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := codemode.Result{
		Value: json.RawMessage(`{"total":33,"echoed":{"hello":"world"},"isError":false,"blocks":1}`),
		Logs:  []string{"sums 3 30"},
		Calls: 3,
	}
	if d := cmp.Diff(want, res); d != "" {
		t.Errorf("result (-want +got):\n%s", d)
	}
	if got := res.Text(); got != "sums 3 30\n"+string(want.Value) {
		t.Errorf("Text() = %q", got)
	}
}

func TestRunToolFailureIsAResult(t *testing.T) {
	f := newFixture(t)
	res, err := f.run(t, `const r = await tools.calc.add("not an object"); return [r.isError, r.text.startsWith("Error: ")];`, codemode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Value) != `[true,true]` {
		t.Errorf("value = %s", res.Value)
	}
}

// hiding wraps a registry view and leaves one tool out of its list, while
// its Call would still reach it: only code mode's own check refuses it.
type hiding struct {
	codemode.View
	hidden string
}

func (h hiding) Tools() ([]tool.Tool, error) {
	all, err := h.View.Tools()
	var out []tool.Tool
	for _, t := range all {
		if t.Name != h.hidden {
			out = append(out, t)
		}
	}
	return out, err
}

func TestRunCannotReachAToolTheViewHides(t *testing.T) {
	f := newFixture(t)
	view := hiding{codemode.RegistryView(f.reg), "mcp__vault__secret"}
	for _, program := range []string{
		`return (await tools.call("mcp__vault__secret")).text`,
		`return (await tools.vault.secret()).text`,
	} {
		res, err := codemode.Run(t.Context(), view, program, codemode.Options{})
		if res.Value != nil {
			t.Errorf("%s: the hidden tool answered %s", program, res.Value)
		}
		if strings.Contains(program, "call(") {
			e := wantError(t, err, codemode.ErrThrown, `unknown tool "mcp__vault__secret"`)
			if e.Line != 1 || e.Column < 10 {
				t.Errorf("%s: place %d:%d, want line 1 at the call", program, e.Line, e.Column)
			}
		} else {
			wantError(t, err, codemode.ErrThrown, "TypeError")
		}
	}
}

func TestRunSyntaxErrorHasItsPlace(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		program   string
		line, col int
	}{
		{"const a = 1;\nconst b = ;\n", 2, 11},
		{"return )", 1, 8},
	} {
		_, err := f.run(t, tc.program, codemode.Options{})
		e := wantError(t, err, codemode.ErrSyntax, "syntax error")
		if e.Line != tc.line || e.Column != tc.col {
			t.Errorf("%q: place %d:%d, want %d:%d (%v)", tc.program, e.Line, e.Column, tc.line, tc.col, e)
		}
	}
}

// A program nested deeper than any a person or a model writes fails as
// too deep, in its own process: a million "(" fits in a request, and the
// parser recurses once a level. It used to be parsed in the caller's
// process first, whose stack overflow (a fatal error, not a panic) ended
// the caller: the gateway and every session on it.
func TestRunDeepNestingEndsOnlyItsProcess(t *testing.T) {
	f := newFixture(t)
	for _, unit := range []string{"(", "!", "a=", "[{a:"} {
		_, err := f.run(t, strings.Repeat(unit, 1<<20/len(unit)), codemode.Options{})
		wantError(t, err, codemode.ErrMemoryLimit, "ran out of stack", "nested too deeply")
	}
}

// What a program throws, or puts on Object.prototype, is its own code,
// which the runner must not run unguarded after the program is over (or
// in building a call's result): a thrown value without a string form, or
// whose stack getter throws, is reported as such with the logs; a setter
// on Object.prototype named like a result's property is not run. The
// runner used to panic in either case: its process ended, the logs lost,
// the failure told as the process's crash.
func TestRunProgramCodeNotRunUnguarded(t *testing.T) {
	f := newFixture(t)
	for _, program := range []string{
		`console.log("a"); throw Object.create(null)`,
		`console.log("a"); throw {toString() { throw new Error("no text") }}`,
		`console.log("a"); const e = new Error("x"); Object.defineProperty(e, "stack", {get() { throw 1 }}); throw e`,
	} {
		res, err := f.run(t, program, codemode.Options{})
		wantError(t, err, codemode.ErrThrown, "uncaught")
		if strings.Contains(err.Error(), "process ended") || !slices.Equal(res.Logs, []string{"a"}) {
			t.Errorf("%s: %v, logs %q; want the throw reported with the logs", program, err, res.Logs)
		}
	}
	_, err := f.run(t, `throw "x".repeat(2 ** 24)`, codemode.Options{})
	wantError(t, err, codemode.ErrThrown, "uncaught xxx", "… (cut)")
	if n := len(err.Error()); n > 8<<10 {
		t.Errorf("a thrown 16 MiB string made an error of %d bytes", n)
	}
	res, err := f.run(t, `Object.defineProperty(Object.prototype, "text", {set() { for (;;); }});
return (await tools.calc.add({a: 1, b: 2})).structured.sum`, codemode.Options{Timeout: 5 * time.Second})
	if err != nil || string(res.Value) != "3" {
		t.Errorf("a call's result with a setter on Object.prototype: %s, %v; want 3", res.Value, err)
	}
}

// A program that closes the function it is the body of, and so runs at
// the top level, is a syntax error like any other: an *Error, as Run
// promises. It used to be a plain error.
func TestRunProgramEscapingItsWrapper(t *testing.T) {
	f := newFixture(t)
	_, err := f.run(t, "}), 1; (function(){", codemode.Options{})
	wantError(t, err, codemode.ErrSyntax, "closes the function it is the body of")
}

func TestRunThrownErrorHasItsPlace(t *testing.T) {
	f := newFixture(t)
	res, err := f.run(t, "console.log('before');\nawait tools.calc.add({a: 1, b: 1});\n  missing.call();\n", codemode.Options{})
	e := wantError(t, err, codemode.ErrThrown, "ReferenceError", "missing")
	if e.Line != 3 || e.Column != 3 {
		t.Errorf("place %d:%d, want 3:3", e.Line, e.Column)
	}
	if d := cmp.Diff([]string{"before"}, res.Logs); d != "" {
		t.Errorf("logs so far (-want +got):\n%s", d)
	}
}

// The error names the limit the caller set, not what was left of it
// when the program's process started (it used to say "(41.2ms)").
func TestRunInfiniteLoopEndsAtTheTimeLimit(t *testing.T) {
	f := newFixture(t)
	_, err := f.run(t, "let i = 0;\nwhile (true) { i++ }", codemode.Options{Timeout: 50 * time.Millisecond})
	wantError(t, err, codemode.ErrTimeLimit, "the program ran past its time limit of 50ms:")
}

func TestRunHangingCallEndsAtTheTimeLimit(t *testing.T) {
	f := newFixture(t)
	// A loaded machine may spend a short limit starting the program's
	// process, before the call: the limit grows until the call is made.
	for limit := 50 * time.Millisecond; ; limit *= 4 {
		_, err := f.run(t, "await tools.slow.hang()", codemode.Options{Timeout: limit})
		wantError(t, err, codemode.ErrTimeLimit, fmt.Sprintf("time limit of %s:", limit))
		if len(f.started) == 0 && limit < 10*time.Second {
			continue
		}
		if len(f.started) != 1 || f.hungDone.Load() != 1 {
			t.Errorf("the hanging call (%d made, within %v) did not see its context end", len(f.started), limit)
		}
		return
	}
}

// runHangs runs a program awaiting three hang calls at once, with the
// caller cancelling once n of them have started.
func (f *fixture) runHangs(t *testing.T, n int, opts codemode.Options) error {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() {
		for range n {
			<-f.started
		}
		cancel()
	})
	_, err := codemode.Run(ctx, codemode.RegistryView(f.reg),
		"await Promise.all([tools.slow.hang(), tools.slow.hang(), tools.slow.hang()])", opts)
	wg.Wait()
	return err
}

// Programs' processes are bounded: with room for two, a third program
// waits for a place (its process not started, so its call not made) until
// one of the two ends, and a program cancelled while it waits says so.
// Each run_code used to start a process of its own, so a client's
// hundreds of concurrent calls each got a heap and a core.
func TestRunProcessesBounded(t *testing.T) {
	f := newFixture(t)
	codemode.SetMaxProcesses(t, 2)
	var cancels []context.CancelFunc
	done := make(chan error, 3)
	start := func() {
		ctx, cancel := context.WithCancel(t.Context())
		cancels = append(cancels, cancel)
		go func() {
			_, err := codemode.Run(ctx, codemode.RegistryView(f.reg), "await tools.slow.hang()", codemode.Options{})
			done <- err
		}()
	}
	start()
	start()
	for range 2 {
		<-f.started
	}
	start()
	select {
	case <-f.started:
		t.Fatal("a third program's process ran while two held the places")
	case <-time.After(500 * time.Millisecond):
	}
	cancels[0]()
	<-f.started // a place came free: the third runs
	cancels[1]()
	cancels[2]()
	for range 3 {
		<-done
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	codemode.SetMaxProcesses(t, 0)
	_, err := codemode.Run(ctx, codemode.RegistryView(f.reg), "return 1", codemode.Options{})
	wantError(t, err, context.Canceled, "cancelled while it waited to start")
}

// TestRunCancelReachesEveryCallInFlight also shows the calls of
// Promise.all run at once: each waits for its context, so one at a time
// the second would never start.
func TestRunCancelReachesEveryCallInFlight(t *testing.T) {
	f := newFixture(t)
	err := f.runHangs(t, 3, codemode.Options{})
	wantError(t, err, context.Canceled, "cancelled")
	if n := strings.Count(err.Error(), "the program was cancelled"); n != 1 {
		t.Errorf("the error says it was cancelled %d times: %v", n, err)
	}
	if got := f.hungDone.Load(); got != 3 {
		t.Errorf("%d of 3 calls in flight saw the cancellation", got)
	}
}

// TestRunMaxConcurrentHoldsCallsBack: two calls fill the slots and wait;
// the third waits for a slot until the cancellation, and then is never
// dispatched.
func TestRunMaxConcurrentHoldsCallsBack(t *testing.T) {
	f := newFixture(t)
	err := f.runHangs(t, 2, codemode.Options{MaxConcurrent: 2})
	wantError(t, err, context.Canceled)
	if got := len(f.started); got != 0 || f.hungDone.Load() != 2 {
		t.Errorf("%d more calls started, %d ended; want 2 run and the third never started", got, f.hungDone.Load())
	}
}

func TestRunTenThousandCallsStopAtTheLimit(t *testing.T) {
	f := newFixture(t)
	_, err := f.run(t, "for (let i = 0; i < 10000; i++) { await tools.text.count() }", codemode.Options{MaxCalls: 50})
	wantError(t, err, codemode.ErrCallLimit, "more than 50")
	if got := f.counted.Load(); got != 50 {
		t.Errorf("%d calls ran, want 50", got)
	}
	// Not awaited: the limit holds for calls started at once too.
	f.counted.Store(0)
	_, err = f.run(t, "const ps = []; for (let i = 0; i < 10000; i++) { ps.push(tools.text.count()) }; await Promise.all(ps)", codemode.Options{MaxCalls: 50})
	wantError(t, err, codemode.ErrCallLimit)
	if got := f.counted.Load(); got > 50 {
		t.Errorf("%d calls ran, want at most 50", got)
	}
}

func TestRunCyclicReturnValue(t *testing.T) {
	f := newFixture(t)
	_, err := f.run(t, "const a = {}; a.self = a; return a", codemode.Options{})
	wantError(t, err, codemode.ErrResult, "without cycles")
}

func TestRunOutputIsBounded(t *testing.T) {
	f := newFixture(t)
	res, err := f.run(t, `for (let i = 0; i < 1000; i++) console.log("line " + i + " " + "x".repeat(50)); return 1`, codemode.Options{MaxOutput: 1000})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range res.Logs {
		n += len(l) + 1
	}
	if !res.Truncated || n > 1000 || len(res.Logs) == 0 {
		t.Errorf("logs: %d bytes in %d lines, truncated %v; want at most 1000 bytes, truncated", n, len(res.Logs), res.Truncated)
	}
	if string(res.Value) != "1" {
		t.Errorf("value = %s, want 1: cutting logs does not stop the program", res.Value)
	}
	_, err = f.run(t, `return "y".repeat(5000)`, codemode.Options{MaxOutput: 1000})
	wantError(t, err, codemode.ErrOutputLimit, "5002 bytes")
}

func TestRunUnboundedAllocationEnds(t *testing.T) {
	f := newFixture(t)
	for _, program := range []string{
		// Grows in the interpreter: the heap watchdog stops it.
		"const keep = []; while (true) { keep.push({a: 'x' + keep.length, b: [1, 2, 3]}) }",
		"let s = 'ab'; const keep = []; while (true) { s = s + s; keep.push(s) }",
		// One builtin asked for too much at once: refused before it starts.
		"return 'x'.repeat(2 ** 30).length",
		"return Array.from({length: 2 ** 31}).length",
		"return new Array(2 ** 32 - 1).fill(0).length",
		"return JSON.stringify(new Array(2 ** 32 - 1)).length",
		"return Math.max.apply(null, {length: 2 ** 30})",
		"return [].concat(new Array(2 ** 32 - 2)).length",
		// Spread, for-of and new Set walk an array in Go: refused too.
		"return Math.max(...new Array(2 ** 32 - 1))",
		"return new Set(new Array(2 ** 32 - 1)).size",
	} {
		_, err := f.run(t, program, codemode.Options{MaxMemory: 64 << 20, Timeout: time.Minute})
		wantError(t, err, codemode.ErrMemoryLimit)
		t.Log(err)
	}
}

func TestRunSandboxHasNoWayOut(t *testing.T) {
	f := newFixture(t)
	res, err := f.run(t, `return [typeof require, typeof setTimeout, typeof setInterval, typeof process, typeof fetch, typeof ArrayBuffer, typeof sleep, typeof JSON]`, codemode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := `["undefined","undefined","undefined","undefined","undefined","undefined","function","object"]`
	if string(res.Value) != want {
		t.Errorf("globals = %s, want %s", res.Value, want)
	}
}

func TestRunForgedJSONCannotForgeTheResult(t *testing.T) {
	f := newFixture(t)
	res, err := f.run(t, `JSON.stringify = () => "not json"; return {a: 1}`, codemode.Options{})
	if err != nil || string(res.Value) != `{"a":1}` {
		t.Errorf("value = %s, %v; want {\"a\":1}", res.Value, err)
	}
}

func TestRunSleepAndStall(t *testing.T) {
	f := newFixture(t)
	res, err := f.run(t, `await sleep(1); await Promise.all([sleep(1), sleep(2)]); return "slept"`, codemode.Options{})
	if err != nil || string(res.Value) != `"slept"` {
		t.Errorf("value = %s, %v", res.Value, err)
	}
	_, err = f.run(t, `await new Promise(() => {})`, codemode.Options{})
	wantError(t, err, codemode.ErrStalled)
	// Each pending sleep is a goroutine: their number is bounded.
	_, err = f.run(t, `const ps = []; for (let i = 0; i < 1000; i++) ps.push(sleep(1)); await Promise.all(ps)`, codemode.Options{})
	wantError(t, err, codemode.ErrThrown, "more than 64 sleeps at once")
}

func TestRunDeepRecursionEnds(t *testing.T) {
	f := newFixture(t)
	_, err := f.run(t, "function down(n) { return down(n + 1) + 1 }\nreturn down(0)", codemode.Options{})
	e := wantError(t, err, codemode.ErrThrown, "deeper than 1024")
	if e.Line != 1 {
		t.Errorf("place %d:%d, want line 1", e.Line, e.Column)
	}
}

// A regular expression that backtracks without end (regexp2's, for the
// lookahead RE2 lacks) cannot hold the program past its time limit: one
// match is abandoned after a second (read as no match), and a
// program that keeps matching ends with ErrTimeLimit.
func TestRunCatastrophicRegexpEnds(t *testing.T) {
	f := newFixture(t)
	type outcome struct {
		res codemode.Result
		err error
	}
	run := func(program string, opts codemode.Options) outcome {
		done := make(chan outcome, 1)
		go func() {
			res, err := f.run(t, program, opts)
			done <- outcome{res, err}
		}()
		select {
		case o := <-done:
			return o
		case <-time.After(20 * time.Second):
			t.Fatalf("%s still runs after 20 s", program)
			return outcome{}
		}
	}
	o := run("return /^(a+)+(?=b)$/.test('a'.repeat(30) + 'c')", codemode.Options{})
	if o.err != nil || string(o.res.Value) != "false" {
		t.Errorf("one catastrophic match: %s, %v; want false", o.res.Value, o.err)
	}
	o = run("while (true) { /^(a+)+(?=b)$/.test('a'.repeat(30) + 'c') }", codemode.Options{Timeout: 1500 * time.Millisecond})
	wantError(t, o.err, codemode.ErrTimeLimit)
}

// Builtins that build gigabytes, or loop billions of times, in one Go call
// the interrupt cannot reach (so the length guards could not foresee
// them): each ends its program with a limit, in bounded time, and this
// process, the program's caller, goes on. Each ran this test process out
// of memory while programs ran in it.
func TestRunBuiltinBombsEnd(t *testing.T) {
	f := newFixture(t)
	opts := codemode.Options{MaxMemory: 64 << 20, Timeout: time.Second}
	for _, program := range []string{
		// one object shared forty levels deep: JSON.stringify writes 2^40 elements
		"let o = [0]; for (let i = 0; i < 40; i++) o = [o, o]; return o",
		// the same through join, which String() of an array calls
		"let o = [0]; for (let i = 0; i < 40; i++) o = [o, o]; return String(o).length",
		// a thousand strings of 4 Mi characters (the most one may be) joined
		"const s = 'x'.repeat(2 ** 22); return Array(1000).fill(s).join('').length",
		// String.raw of a raw array that claims 2^53 elements
		"return String.raw({raw: {length: 2 ** 53 - 1}}).length",
		// the array iterator arguments objects keep, on four billion holes
		"const it = (function () { return arguments[Symbol.iterator] })(); return Array.from({[Symbol.iterator]: () => it.call(new Array(2 ** 32 - 1))}).length",
	} {
		start := time.Now()
		_, err := f.run(t, program, opts)
		if !errors.Is(err, codemode.ErrMemoryLimit) && !errors.Is(err, codemode.ErrTimeLimit) {
			t.Errorf("%s: %v, want a memory or time limit", program, err)
		}
		if took := time.Since(start); took > opts.Timeout+10*time.Second {
			t.Errorf("%s: ended after %v", program, took)
		}
		t.Logf("%s: %v", program, err)
	}
}

// A caller that cancels a program stuck in a builtin (where the
// interrupt cannot reach) gets its answer within a second or two: the
// program's process is killed, and the error wraps the caller's cause.
func TestRunCancelledInABuiltinEnds(t *testing.T) {
	f := newFixture(t)
	cause := errors.New("the client went away")
	ctx, cancel := context.WithCancelCause(t.Context())
	time.AfterFunc(300*time.Millisecond, func() { cancel(cause) })
	start := time.Now()
	_, err := codemode.Run(ctx, codemode.RegistryView(f.reg),
		"let o = [0]; for (let i = 0; i < 40; i++) o = [o, o]; return String(o).length", codemode.Options{Timeout: time.Minute})
	if !errors.Is(err, cause) {
		t.Errorf("error %v, want one wrapping the caller's cause", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Run returned %v after the cancel", took)
	}
}

// A program's value reaches its caller as the program wrote it: the wire
// between the program's process and Run escapes no <, > or &.
func TestRunValueKeepsHTMLCharacters(t *testing.T) {
	f := newFixture(t)
	res, err := f.run(t, `console.log("<b>&</b>"); return {html: "<a href='x'>&amp;</a>"}`, codemode.Options{})
	if err != nil || string(res.Value) != `{"html":"<a href='x'>&amp;</a>"}` || res.Logs[0] != "<b>&</b>" {
		t.Errorf("value %s, logs %q, %v", res.Value, res.Logs, err)
	}
}

// A call whose arguments are over what the wire carries (64 MiB; 1 MiB
// here) ends the program with a memory limit that says so, not a bare
// kill.
func TestRunHugeCallArgumentsEnd(t *testing.T) {
	codemode.SetMaxLine(t, 1<<20)
	f := newFixture(t)
	_, err := f.run(t, "return (await tools.calc.add({k: 'x'.repeat(2 ** 20)})).text", codemode.Options{})
	wantError(t, err, codemode.ErrMemoryLimit, "a tool call's arguments are over 1 MiB")
}
