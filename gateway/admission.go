package gateway

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/internal/tasks"
	"github.com/mcpbridge/mcpbridge/tool"
)

// A tools/call is admitted once, whatever way it arrived and however
// long it lives: a plain call, a task (gated before it exists, ended
// when its body returns), or a call parked for its client's answers
// (which keeps its admission: the retries that bring the answers enter
// nothing again). One admission is one Gate.Enter, so one audit line
// and one rate token, and one ended with the call's true outcome. A
// prompts/get or resources/read is admitted the same way (offered,
// parkedoffers.go).

// admission is a call admitted to run: its slot held, its Gate entered.
// run (or abandon, for a task that could not start) releases both, once.
type admission struct {
	g     *Gateway
	req   callRequest
	name  string          // the registry tool (a prompt's public name or a resource's URI: offered)
	ctx   context.Context // the Gate's: the request's, with what the Gate added
	ended func(Outcome) error
	gcall Call // what the Gate was told
	// within is the context the call runs in (running): kept here, not
	// made, as an admitted call runs once.
	within runningCtx
	// over guards the Gate's end; released the slot's release: a call
	// that parks holds its slot until its body returns, past the request
	// that admitted it. A flag each, not a sync.Once: no two ends (or
	// releases) of one call run at once, as the call ends on one path,
	// and the flags keep the admission in a smaller allocation.
	over, released atomic.Bool
	// task is the id of the shared task the call runs as (taskshare.go),
	// nil for none: its end is checked against the task's record.
	task atomic.Pointer[string]
}

// share is whose share of MaxCallsPerSession a call takes: its session's,
// or, for a stateless extension task, which has none, its caller's (an
// identity, else an address: placeFor). Keyed by the missing session
// alone, every such task would count under one key, a cap that one
// client could fill for all.
type share struct {
	session *mcp.ServerSession
	caller  string
	// holder is whose share of the gateway's calls it takes (holderOf).
	holder holder
}

// share returns whose share of the per-session cap req takes, and false
// for a oneRequest call, which takes a slot of the gateway's only (and
// its holder's).
func (req callRequest) share() (share, bool) {
	return share{session: req.session, caller: req.caller, holder: req.holder}, !req.oneRequest
}

// holder is who holds a share of the gateway's calls or streams: an
// identity, or, without identities, a client address.
type holder struct{ identity, address string }

// String names h: "identity ID", "address ADDR", or "" for neither.
func (h holder) String() string {
	switch {
	case h.identity != "":
		return "identity " + h.identity
	case h.address != "":
		return "address " + h.address
	}
	return ""
}

// holderOf is who a call of session with ctx holds its share of the
// gateway's calls for: its identity (the request's, or the session's it
// was bound to), else, without identities, its client's address.
func (g *Gateway) holderOf(ctx context.Context, session *mcp.ServerSession) holder {
	id := identityIn(ctx)
	if id == "" && session != nil && g.opts.Authenticate != nil {
		id = g.owners.identityOf(session.ID())
	}
	if id != "" {
		return holder{identity: id}
	}
	return holder{address: addressIn(ctx)}
}

// admit admits req, or returns what answers it instead: the session's
// activity, one of its call slots, the backends' readiness, the served
// name in the caller's view, the Gate. Slot before readiness: calls
// parked until the backends are ready are bounded by the cap like running
// ones.
func (g *Gateway) admit(ctx context.Context, req callRequest) (*admission, result, error) {
	g.seen(ctx, req.session, "tools/call")
	req.holder = g.holderOf(ctx, req.session)
	s, ofSession := req.share()
	if err := g.admitCall(s, ofSession); err != nil {
		return nil, result{}, err
	}
	a, res, err := g.enter(ctx, req)
	if a == nil {
		g.releaseCall(s, ofSession)
	}
	return a, res, err
}

// enter is admit once the slot is held.
func (g *Gateway) enter(ctx context.Context, req callRequest) (*admission, result, error) {
	if err := g.awaitReadyOn(ctx, req.session, req.header, req.madeOn, "tools/call"); err != nil {
		return nil, result{}, err
	}
	p := req.params
	name, ok := (*g.callable.Load())[p.Name]
	if !ok {
		return nil, result{}, g.notCallable(ctx, req)
	}
	c := Call{Tool: p.Name, Public: name, Session: sessionID(req.session), Client: callClient(req), Header: req.header, Meta: p.Meta, Arguments: p.Arguments, Parent: req.inner.call()}
	gctx, ended, err := g.gate.Enter(ctx, c)
	if err != nil {
		if errors.Is(err, ErrHidden) {
			return nil, result{}, g.notCallable(ctx, req) // the Gate recorded the refusal
		}
		res, err := refused(err)
		return nil, res, err
	}
	return &admission{g: g, req: req, name: name, ctx: gctx, ended: ended, gcall: c}, result{}, nil
}

// serve runs the admitted call in its request's context (a.ctx), which
// the request's cancel, when it has one, cancels (callRequest.cancel).
func (a *admission) serve() (result, error) {
	return a.runIn(a.ctx, a.req.cancel, true)
}

// run runs the admitted call with ctx, a task's context carrying its
// values (see runIn). A task keeps its result whatever its end's record:
// its client reads it later, and the Gate refuses the calls after.
func (a *admission) run(ctx context.Context) (result, error) {
	return a.runIn(ctx, nil, false)
}

// runIn runs the admitted call with ctx bound to the session's view,
// releases its slot, and ends it with its outcome: when it returns, or,
// for a call that parks for its client's answers, when the parked call
// returns (runParkable), which holds the slot until then. cancel, when
// set, cancels ctx (Gateway.run's callHow.cancel). answered is a call
// answered now, whose result is held back when its end could not be
// recorded (Gate.Enter).
func (a *admission) runIn(ctx context.Context, cancel context.CancelCauseFunc, answered bool) (result, error) {
	g, req := a.g, a.req
	how := callHow{stream: req.header.Get(streamHeader), peer: req.peer, cancel: cancel}
	ctx, sv := g.boundView(a.running(ctx), req)
	defer g.grew(sv, req.params.Name)
	if answered && req.asksByResult() {
		// Only a call answered now parks: a task's questions are its own
		// (markAsks, runExtTask's inputs), and its body's end is its result.
		return g.runParkable(ctx, a)
	}
	defer a.release()
	res, err := g.run(ctx, a.name, req.session, how, req.params)
	if unrecorded := a.endIn(ctx, res, err); unrecorded != nil && answered {
		return result{}, unrecorded // its end not recorded: not answered either
	}
	return res, err
}

// endIn is end for a call that ran with ctx: one whose task this gateway
// handed over as it stopped (tool.ErrHandedOver) ends handed over, not
// with the error its stop left it.
func (a *admission) endIn(ctx context.Context, res result, err error) error {
	if errors.Is(context.Cause(ctx), tool.ErrHandedOver) && a.over.CompareAndSwap(false, true) {
		return a.ended(Outcome{HandedOver: true})
	}
	return a.end(res, err)
}

// end tells the Gate how the call ended; only the first end counts. The
// error is the Gate's, when it could not record the end (Gate.Enter).
func (a *admission) end(res result, err error) error {
	if a.over.CompareAndSwap(false, true) {
		o := Outcome{IsError: res.isError, Failed: err != nil}
		if id := a.task.Load(); id != nil {
			o.EndedElsewhere = a.g.endedElsewhere(*id)
		}
		return a.ended(o)
	}
	return nil
}

// runsAs notes that the call runs as task id of st, when st shares it
// with the other replicas.
func (a *admission) runsAs(st *tasks.Store, id string) {
	if st.Holds(id) && !st.Untold(id) {
		a.task.Store(&id)
	}
}

// release gives back the call's slot; only the first release counts.
func (a *admission) release() {
	if a.released.CompareAndSwap(false, true) {
		a.g.releaseCall(a.req.share())
	}
}

// abandon ends an admitted call that will not run (its task could not
// start): failed, its slot released.
func (a *admission) abandon(err error) {
	_ = a.end(result{}, err) // nothing is answered: the refusal is
	a.release()
}

// detached is the parent of the admitted call's task: the Gate's values,
// without the end of the request that made the task, nor its id (what
// the task sends belongs to no request: on HTTP, it goes to the
// session's stream, not to the POST that made the task, long answered).
func (a *admission) detached() context.Context {
	return sdkwire.WithoutRequest(context.WithoutCancel(a.ctx))
}

// serveRetry serves a call again with a requestState: its answers go to
// the call parked under that state, which holds the Gate's admission and
// the call slot of its first round; the retry takes neither, it waits
// for what the call says next. A state that names no call of this caller
// (it ended, expired, or is another's) is refused at once (resume).
func (g *Gateway) serveRetry(ctx context.Context, req callRequest) (result, error) {
	g.seen(ctx, req.session, "tools/call")
	ctx, sv := g.boundView(ctx, req)
	defer g.grew(sv, req.params.Name)
	return g.resume(ctx, req)
}

// bindView binds the view of req's session to ctx (a search loads its
// matches there); done announces the view's growth once the call
// returned (a parked task's call: taskrelay.go).
func (g *Gateway) bindView(ctx context.Context, req callRequest) (_ context.Context, done func()) {
	ctx, sv := g.boundView(ctx, req)
	if sv == nil {
		return ctx, func() {}
	}
	name := req.params.Name
	return ctx, func() { g.noteGrowth(sv, name) }
}

// boundView is bindView for a caller that announces the growth itself
// (grew), without a func made on every call's path: ctx bound to the view
// of req's session, and that view; nil for none.
func (g *Gateway) boundView(ctx context.Context, req callRequest) (context.Context, *sessionView) {
	sv := g.callView(req)
	if sv == nil || sv.view == nil {
		return ctx, nil
	}
	return sv.view.Bind(ctx), sv
}

// grew announces the growth of sv, a view boundView bound (nil: none), by
// the call of the tool served as name, once the call returned.
func (g *Gateway) grew(sv *sessionView, name string) {
	if sv != nil {
		g.noteGrowth(sv, name)
	}
}

// notCallable answers a call of a name the gateway does not serve: why,
// when a source withholds the tool (its pin changed) and the caller may
// see it, so that the operator learns what to re-pin; else as a tool that
// does not exist, so that no caller learns of a tool hidden from it.
func (g *Gateway) notCallable(ctx context.Context, req callRequest) error {
	name := req.params.Name
	why, held := g.reg.Withheld(name)
	if !held {
		return unknownTool(name)
	}
	if !g.visibleTo(ctx, req.header, sessionID(req.session))(OfferTool, name) {
		return unknownTool(name)
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: (&tool.WithheldError{Name: name, Why: why}).Error()}
}
