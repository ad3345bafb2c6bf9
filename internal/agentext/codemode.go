package agentext

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/mcpbridge/mcpbridge/agent"
	"github.com/mcpbridge/mcpbridge/attach"
	"github.com/mcpbridge/mcpbridge/codemode"
	"github.com/mcpbridge/mcpbridge/tokens"
	"github.com/mcpbridge/mcpbridge/tool"
	"github.com/mcpbridge/mcpbridge/toolview"
)

// codeModePrompt follows the system prompt in code mode.
const codeModePrompt = "\n\nCode mode: the tools are a TypeScript API under `tools` (below). Do the task with run_code: " +
	"one short JavaScript program (no type annotations) that calls tools.<namespace>.<function>(args), awaits the results " +
	"(Promise.all for calls that do not depend on each other), filters them, and returns or console.logs only what you need. " +
	"Each result is {text, structured, isError, content}. Prefer one program with several calls to several programs."

// codeModeLarge says how the model finds the functions when the whole
// declaration would not fit the prompt.
const codeModeLarge = "\nThe API is large: below is the list of its namespaces; read one with describe_api({namespace}) " +
	"or find functions with search_api({query}) before writing the program."

// CodeMode switches opts to code mode: the model sees run_code,
// describe_api and search_api, run in a registry of their own, and the
// declaration (or, over the context budget, its namespaces page) after
// opts.System. Every call a program makes, to a tool of opts.Registry,
// passes opts.Approver and gets opts.CallContext as a direct call would;
// the images and audio it reads are saved in opts.SpillDir beside the
// run's cut results, and named by path. Call it once the options are
// complete, before agent.New.
func CodeMode(opts *agent.Options) error {
	callContext := opts.CallContext
	if callContext == nil {
		callContext = func(ctx context.Context, _ agent.Call) context.Context { return ctx }
	}
	view := &approvedView{reg: opts.Registry, approver: opts.Approver, callContext: callContext}
	reg := tool.NewRegistry()
	// Images and audio of inner calls go where the run's cut results go.
	var store attach.Store
	if opts.SpillDir != "" {
		store = attach.Dir(opts.SpillDir)
	}
	if _, err := reg.Register(codemode.Tools(view, codemode.Options{Attachments: store})...); err != nil {
		return fmt.Errorf("code mode: %w", err) // untested: the three names are distinct
	}
	api := codemode.NewAPI(view.list())
	about := api.Declaration()
	if n, err := tokens.Count(about); err != nil || n > toolview.DefaultContextWindow/10 {
		about = codeModeLarge + "\n" + api.Namespaces()
	}
	opts.Registry = reg
	opts.Tools = func() ([]tool.Tool, error) { return reg.List(), nil }
	opts.System += codeModePrompt + "\n\n" + about
	opts.Approver = codeApprover{opts.Approver}
	opts.CallContext = nil // the inner calls show their progress
	return nil
}

// codeApprover runs the code mode tools without asking (each call a
// program makes is asked about on its own) and asks inner about the rest.
type codeApprover struct{ inner agent.Approver }

func (a codeApprover) Approve(ctx context.Context, c agent.Call) (bool, error) {
	if slices.Contains([]string{codemode.RunName, codemode.DescribeName, codemode.SearchName}, c.Name) {
		return true, nil
	}
	return a.inner.Approve(ctx, c)
}

// approvedView is the bridge's registry as code mode's view: every tool
// (deferred loading is what code mode replaces), each call approved first,
// one question at a time however many calls a program makes at once.
type approvedView struct {
	reg         *tool.Registry
	approver    agent.Approver
	callContext func(context.Context, agent.Call) context.Context

	asking sync.Mutex
}

var _ codemode.View = (*approvedView)(nil)

// list is the registry's tools but search_tools, which code mode does not
// need.
func (v *approvedView) list() []tool.Tool {
	return slices.DeleteFunc(v.reg.List(), func(t tool.Tool) bool { return t.Name == toolview.SearchName })
}

func (v *approvedView) Tools() ([]tool.Tool, error) { return v.list(), nil }

func (v *approvedView) Call(ctx context.Context, name string, args json.RawMessage) (tool.Result, error) {
	c := agent.Call{Name: name, Args: args}
	c.Tool, _ = v.reg.Get(name)
	v.asking.Lock()
	ok, err := v.approver.Approve(ctx, c)
	v.asking.Unlock()
	if err != nil {
		return tool.Result{}, fmt.Errorf("approving %s: %w", name, err)
	}
	if !ok {
		msg := "the user denied this tool call"
		return tool.Result{IsError: true, Content: []tool.Content{tool.Text("Error: " + msg)}, Error: &tool.ErrorInfo{Message: msg}}, nil
	}
	return v.reg.Execute(v.callContext(ctx, c), name, args)
}
