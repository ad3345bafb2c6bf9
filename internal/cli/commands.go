package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpbridge/mcpbridge/chattools"
	"github.com/mcpbridge/mcpbridge/internal/callargs"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/tool"
)

// chatTool is one entry of a chat-completions "tools" array, the shape
// DeepSeek and OpenAI accept as is.
type chatTool = chattools.Tool

// tools lists every tool under its public name, or with NAME shows that
// tool in full. Exit status 1 when an enabled server is not ready, or a
// definition is withheld by its pin.
func (e *env) tools(ctx context.Context, argv []string) error {
	f, err := parseFlags("tools", specOf("tools"), argv)
	if err != nil {
		return err
	}
	switch len(f.args) {
	case 0:
	case 1:
		return e.toolInFull(ctx, f, f.args[0])
	default:
		return usagef("tools: want at most one tool NAME, got %d arguments: %s", len(f.args), strings.Join(f.args, " "))
	}
	_, b, err := e.openSource(ctx, f)
	if b == nil {
		return err
	}
	defer b.close()
	e.reportFailures(b)
	held := e.reportPinNotes(b)
	list, err := b.modelTools()
	if err != nil {
		return fmt.Errorf("tools: %w", err)
	}
	if f.tokens {
		if err := writeTokens(e.Stdout, list, f.json); err != nil {
			return fmt.Errorf("tools: %w", err)
		}
	} else if f.json {
		if err := writeJSON(e.Stdout, chattools.All(list)); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
		for _, t := range list {
			fmt.Fprintf(tw, "%s\t%s\n", t.Name, termsafe.Summary(t.Description))
		}
		tw.Flush()
		note, err := b.viewNote(list)
		if err != nil {
			return fmt.Errorf("tools: %w", err)
		}
		fmt.Fprintf(e.Stderr, "%s%s\n", b.summary(fmt.Sprintf("%d tools", len(list))), note)
		e.sayNoServers(b)
	}
	if f.timings {
		e.printTimings(b)
	}
	if len(b.failed) > 0 || held > 0 {
		return &exitError{ExitFailed}
	}
	return nil
}

// call calls one tool by its public name and prints what the model sees.
func (e *env) call(ctx context.Context, argv []string) error {
	f, err := parseFlags("call", specOf("call"), argv)
	if err != nil {
		return err
	}
	if len(f.args) == 0 || len(f.args) > 2 {
		return usagef("call: want NAME [ARGS_JSON | -] [--arg K=V]..., got %d arguments", len(f.args))
	}
	timeout, err := callTimeout(f.timeout)
	if err != nil {
		return err
	}
	if err := callargs.Swapped("mcpbridge call"+sourceArgs(f), f.args); err != nil {
		return usagef("call: %v", err)
	}
	name := f.args[0]
	args := json.RawMessage(`{}`)
	if len(f.args) == 2 {
		if args, err = e.callArgs(f.args[1]); err != nil {
			return err
		}
	}
	src, err := e.loadSource(f, e.catalog(true))
	if err != nil {
		return err
	}
	src = src.only(serverOf(name))
	b, err := e.open(ctx, src, f)
	if err != nil {
		return err
	}
	defer b.close()
	t, ok := b.reg.Get(name)
	if !ok {
		e.reportFailures(b)
		e.reportPinNotes(b)
		if !withheld(b, name) {
			e.suggestTool(name, b)
		}
		e.sayNoServers(b)
	} else if args, err = callargs.Apply(name, t.InputSchema, args, f.callArgs); err != nil {
		return usagef("call: %v", err)
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	callCtx, endProgress := e.callProgress(ctx, name, f)
	if f.task {
		callCtx = e.asTask(callCtx, name, t, ok)
	}
	res, _ := b.reg.Execute(callCtx, name, args)
	endProgress()
	if timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		fmt.Fprintf(e.Stderr, "mcpbridge: call: %s gave no result within --timeout %s; the call was cancelled\n", name, timeout)
	}
	return e.printResult(ctx, f, res)
}

// asTask is ctx asking for the call of name (t, when known) to run as a
// task (--task); one its server does not offer as a task runs as a plain
// call, which is said rather than left to be taken for a task.
func (e *env) asTask(ctx context.Context, name string, t tool.Tool, known bool) context.Context {
	if known && !t.Background {
		fmt.Fprintf(e.Stderr, "mcpbridge: call: %s is not offered as a task (its server declares no execution.taskSupport for it), so --task runs it as a plain call\n", name)
	}
	return tool.WithBackground(ctx)
}

// printResult prints what call's result is to the model (or, with
// --json, the registry result), failing with ExitFailed when the call did.
func (e *env) printResult(ctx context.Context, f *flags, res tool.Result) error {
	if f.json {
		if err := writeJSON(e.Stdout, res); err != nil {
			return err
		}
	} else {
		// The model's text, lines and tabs kept, escape sequences shown
		// escaped: the server's text must not drive the terminal.
		fmt.Fprintln(e.Stdout, termsafe.Text(e.resultText(ctx, f, res)))
	}
	if res.IsError {
		return &exitError{ExitFailed}
	}
	return nil
}

// callTimeout parses --timeout; 0 when absent (the server's
// toolCallTimeoutMs alone bounds the call).
func callTimeout(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, usagef("call: --timeout %q: want a duration such as 30s or 1m30s", v)
	}
	return d, nil
}

// callArgs reads the ARGS_JSON of call (callargs.ReadObject); a mistake
// in it is a usage error.
func (e *env) callArgs(arg string) (json.RawMessage, error) {
	raw, err := callargs.ReadObject(arg, e.Stdin)
	if _, mistaken := errors.AsType[*callargs.MistakeError](err); mistaken {
		return nil, usagef("call: %v", err)
	}
	if err != nil {
		return nil, fmt.Errorf("call: %w", err)
	}
	return raw, nil
}

// serverOf returns the serverName inside a public name. Server names never
// contain "__" (docs/decisions.md §2), so the first "__" after the prefix ends it.
func serverOf(public string) string {
	rest, ok := strings.CutPrefix(public, "mcp__")
	if !ok {
		return ""
	}
	server, _, ok := strings.Cut(rest, "__")
	if !ok {
		return ""
	}
	return server
}

// openCommand parses the line of a one-shot command that takes a SOURCE and
// no arguments (tools, status), loads the source and starts its servers.
// A nil bridge comes with an error, or with nil after --help printed the
// usage.
func (e *env) openCommand(ctx context.Context, cmd string, argv []string) (*flags, *source, *bridge, error) {
	f, err := parseFlags(cmd, specOf(cmd), argv)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(f.args) > 0 {
		return nil, nil, nil, usagef("%s: unexpected argument %q", cmd, f.args[0])
	}
	src, b, err := e.openSource(ctx, f)
	return f, src, b, err
}

// openSource loads the SOURCE of f and starts its servers; a nil bridge
// comes with an error.
func (e *env) openSource(ctx context.Context, f *flags) (*source, *bridge, error) {
	src, err := e.loadSource(f, e.catalog(true))
	if err != nil {
		return nil, nil, err
	}
	b, err := e.open(ctx, src, f)
	return src, b, err
}
