package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// Inner calls: a tool the gateway serves may call other tools on behalf of
// its caller (code mode's run_code runs a program whose every call is
// one). Such a call takes the gateway's one call path like a client's:
// its session's slot, the caller's view, the Gate (policy, rate limit,
// audit) with the caller's headers and session, then Registry.Execute
// with its pins, timeouts and result caps. Nothing else reaches a tool on
// a caller's behalf.

// runningKey marks the context of an admitted call with its admission,
// so that the calls its tool makes know whose they are.
type runningKey struct{}

// running returns ctx marked as the context of a's call. It is called
// once, as the call starts: the mark is the admission's (within).
func (a *admission) running(ctx context.Context) context.Context {
	a.within = runningCtx{Context: ctx, a: a}
	return &a.within
}

// runningCtx is a context marked as an admitted call's, as
// context.WithValue(ctx, runningKey{}, a) would be, kept in the
// admission instead of allocated on every call's path.
type runningCtx struct {
	context.Context
	a *admission
}

func (ctx *runningCtx) Value(key any) any {
	if _, ok := key.(runningKey); ok {
		return ctx.a
	}
	return ctx.Context.Value(key)
}

// errNoCaller is CallFor's and ToolsFor's error outside a served call.
var errNoCaller = errors.New("gateway: no tools/call of a client runs in this context (an inner call must be made from a tool the gateway serves)")

// callerOf returns the admitted call ctx runs in, nil outside one.
func (g *Gateway) callerOf(ctx context.Context) *admission {
	a, _ := ctx.Value(runningKey{}).(*admission)
	if a == nil || a.g != g {
		return nil
	}
	return a
}

// Holder names whose share of the gateway the tools/call that ctx runs in
// takes, as the gateway's per-identity limits count it: its identity,
// else, without identities, its client's address; "" off HTTP without
// identities (one client) or when ctx is not a served call's. Code mode
// shares its programs' processes out by it.
func (g *Gateway) Holder(ctx context.Context) string {
	a := g.callerOf(ctx)
	if a == nil {
		return ""
	}
	return a.req.holder.String()
}

// CallFor calls the registry tool public (a public name) for the caller
// of the tools/call that ctx runs in, ctx being that call's context or
// one derived from it (a tool's Execute gets it). The call is admitted,
// gated and run as if that caller had made it (see Gate): it takes a slot
// of the caller's session, its Gate Call has Parent set to the calling
// tool's call, and a tool the Gate hides from the caller, or that the
// gateway does not serve, is an error saying `unknown tool`, as a
// client's call of it is. Its progress is not relayed (its params carry
// no progress token); its backend's log messages reach the client as the
// calling tool's do. The Result is the registry's (its Wire included); the error is
// non-nil when the call was refused before it ran, or ctx is not a served
// call's.
func (g *Gateway) CallFor(ctx context.Context, public string, args json.RawMessage) (tool.Result, error) {
	parent := g.callerOf(ctx)
	if parent == nil {
		return tool.Result{}, errNoCaller
	}
	served, ok := g.servedName(public)
	if !ok {
		return tool.Result{}, unknownTool(public)
	}
	req := parent.req
	req.inner = parent
	req.params = &mcp.CallToolParamsRaw{Name: served, Arguments: args, Meta: traceMeta(parent.req.params.Meta)}
	a, res, err := g.admit(ctx, req)
	if a == nil {
		if err == nil {
			err = fmt.Errorf("%s", wireText(res)) // a refusal the Gate answered with an isError result
		}
		if served != public && sameError(err, unknownTool(served)) {
			// As the program named it: a hidden tool's served (raw) name
			// would tell it from one that does not exist.
			err = unknownTool(public)
		}
		return tool.Result{}, err
	}
	return a.runInner(a.ctx)
}

// sameError reports whether err is the JSON-RPC error want.
func sameError(err, want error) bool {
	e, ok := errors.AsType[*jsonrpc.Error](err)
	w, _ := errors.AsType[*jsonrpc.Error](want)
	return ok && w != nil && e.Code == w.Code && e.Message == w.Message
}

// runInner runs an admitted inner call as run does a plain one, keeping
// the registry's Result: it is never parked (its caller is a program, not
// a client that can answer), and asks its backend's questions of the
// client as a call that does not park does (Gateway.ask): a 2026-07-28
// client is not asked.
func (a *admission) runInner(ctx context.Context) (tool.Result, error) {
	g, req := a.g, a.req
	defer a.release()
	ctx, sv := g.boundView(ctx, req)
	defer g.grew(sv, req.params.Name)
	var out tool.Result
	res, err := g.run(a.running(ctx), a.name, req.session, callHow{keep: &out, peer: req.peer}, req.params)
	if unrecorded := a.end(res, err); unrecorded != nil {
		return tool.Result{}, unrecorded
	}
	return out, err
}

// ToolsFor returns the registry tools the gateway serves to the caller of
// the tools/call ctx runs in (see CallFor): those its Gate's Screen lets
// it see, when the Gate is one.
func (g *Gateway) ToolsFor(ctx context.Context) ([]tool.Tool, error) {
	parent := g.callerOf(ctx)
	if parent == nil {
		return nil, errNoCaller
	}
	served := make(map[string]bool)
	for _, public := range *g.callable.Load() {
		served[public] = true
	}
	may := g.visibleTo(ctx, parent.req.header, sessionID(parent.req.session))
	var out []tool.Tool
	for _, t := range g.reg.List() {
		if served[t.Name] && may(OfferTool, t.Name) {
			out = append(out, t)
		}
	}
	return out, nil
}

// servedName is the name the tool public is served under, false when it
// is not served.
func (g *Gateway) servedName(public string) (string, bool) {
	callable := *g.callable.Load()
	if _, ok := callable[public]; ok && callable[public] == public {
		return public, true
	}
	for served, p := range callable { // raw names: the served name differs
		if p == public {
			return served, true
		}
	}
	return "", false
}

// traceMeta is the part of a call's _meta its inner calls carry: its
// trace context, so that they continue its trace.
func traceMeta(meta mcp.Meta) mcp.Meta {
	var out mcp.Meta
	for _, k := range []string{"traceparent", "tracestate"} {
		if v, ok := meta[k]; ok {
			if out == nil {
				out = mcp.Meta{}
			}
			out[k] = v
		}
	}
	return out
}

// wireText is the text of a result's content blocks.
func wireText(res result) string {
	var blocks []tool.Content
	if err := json.Unmarshal(res.content, &blocks); err != nil {
		return string(res.content) // untested: the gateway's own blocks
	}
	return tool.Result{Content: blocks}.Text()
}

// call is the Gate's Call of a's call, nil for none.
func (a *admission) call() *Call {
	if a == nil {
		return nil
	}
	return &a.gcall
}
