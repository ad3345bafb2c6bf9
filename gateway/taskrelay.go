package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/serverwire"
	"github.com/mcpbridge/mcpbridge/internal/tasks"
	"github.com/mcpbridge/mcpbridge/tool"
)

// A backend of the 2026-07-28 tasks extension decides per call whether
// a call becomes a task, maybe after rounds of input-required results
// (tool.Tool.ServerTasks). The gateway relays such a call as the backend
// answers it: its first rounds reach the client as input-required results
// (parked, as a plain call's: questions.go), a result that comes at once
// is the call's, and only when the backend makes a task (tool.TaskStarted)
// does the gateway make its own, whose creation answers the client's
// request of that round; the call then runs on as the task's body, its
// backend's questions the task's inputRequests.

// relayServerTask answers req, a call from a client that declares the
// extension, with the extension's tasks of x: the first call of a tool
// whose backend decides about tasks, or a call again with a requestState
// of any task tool (its call may have begun without the extension).
func (g *Gateway) relayServerTask(ctx context.Context, req callRequest, x extTasks) (json.RawMessage, error) {
	var res result
	var err error
	if req.params.RequestState != "" {
		res, err = g.serveRetry(ctx, req)
	} else {
		res, err = g.startServerTask(ctx, req, x)
	}
	if err != nil {
		return nil, err
	}
	return g.extAnswer(res), nil
}

// extAnswer is res in the shapes of 2026-07-28: the gateway's task the
// call became, an input-required round, or the call's result.
func (g *Gateway) extAnswer(res result) json.RawMessage {
	switch {
	case res.wire != nil:
		return res.wire
	case res.questions != nil:
		return mustJSON(map[string]any{"resultType": "input_required", "inputRequests": res.questions, "requestState": res.state})
	}
	return serverwire.CallResultJSONPerRequest(res.isError, res.content, res.structured, g.serverInfo)
}

// startServerTask admits req and runs it parked until its first round:
// the backend's questions, its result, or the task it made (promotion).
func (g *Gateway) startServerTask(ctx context.Context, req callRequest, x extTasks) (result, error) {
	a, res, err := g.admit(ctx, req)
	if a == nil {
		return res, err
	}
	ctx, grown := g.bindView(a.running(a.ctx), req)
	defer grown()
	caps := requestCapabilities(req)
	pr := &promotion{a: a, x: x}
	res, ran, err := g.park(ctx, req, func(callCtx context.Context, pc *parkedCall) (result, error) {
		defer a.release() // the call's slot is held until its body returns, task or not
		pr.pc = pc
		callCtx = tool.WithTaskStarted(callCtx, func(backendTask string) {
			pr.started()
			if store, id := pr.task(); store != nil {
				g.recordBackendTask(store, id, a.name, backendTask, pr.pc.cancel)
			}
		})
		ask := pr.asker(pc.asker(caps))
		callCtx = tool.WithInputs(tool.WithAsk(callCtx, ask), pr.inputs(pc.inputs(caps)))
		res, err := g.run(callCtx, a.name, req.session, callHow{ask: ask, parked: true, notes: &pc.notes}, req.params)
		if unrecorded := a.endIn(callCtx, res, err); unrecorded != nil {
			return result{}, unrecorded
		}
		return res, err
	})
	if !ran {
		a.release()
		res = errorResult("tool call refused: " + errClosing.Error())
		_ = a.end(res, nil) // refused either way
	}
	return res, err
}

// requestCapabilities are the capabilities req's client declares: in the
// request's _meta (2026-07-28, read as the SDK's session reads them),
// else when it opened its session.
func requestCapabilities(req callRequest) *mcp.ClientCapabilities {
	raw, ok := req.params.Meta[mcp.MetaKeyClientCapabilities]
	if !ok {
		return clientCapabilities(req.session)
	}
	caps, err := serverwire.DecodeCapabilities(mustJSON(raw))
	if err != nil {
		return clientCapabilities(req.session)
	}
	return caps
}

// promotion makes the gateway's task of a parked call when its backend
// makes one, and then puts the call's questions to the task.
type promotion struct {
	a  *admission
	x  extTasks
	pc *parkedCall // set before the call runs

	mu    sync.Mutex
	store *tasks.Store // the task's, once made; guarded by mu
	id    string       // guarded by mu
}

// started makes the gateway's task, whose creation answers the client's
// request waiting on the call (round); a task that cannot be made ends
// the call, saying why.
func (pr *promotion) started() {
	var store *tasks.Store
	raw, err := pr.x.start(func(st *sessionTasks) (json.RawMessage, error) {
		store = st.store
		return st.store.Start(noteCall(pr.a.detached(), pr.a.gcall), pr.follow)
	})
	var made struct {
		TaskID string `json:"taskId"`
	}
	if err == nil {
		err = json.Unmarshal(raw, &made)
	}
	if err != nil {
		pr.pc.cancel(fmt.Errorf("the backend made a task of the call, and the gateway could not make its own: %w", err))
		return
	}
	pr.mu.Lock()
	pr.store, pr.id = store, made.TaskID
	pr.mu.Unlock()
	pr.a.runsAs(store, made.TaskID)
	select {
	case pr.pc.promoted <- raw:
	default: // told already: a call makes one task
	}
}

// follow is the body of the gateway's task: the call's end, which its
// cancellation (tasks/cancel, Close) brings about.
func (pr *promotion) follow(ctx context.Context) (json.RawMessage, error) {
	stop := context.AfterFunc(ctx, func() { pr.pc.cancel(context.Cause(ctx)) })
	defer stop()
	<-pr.pc.done
	return extTaskEnd(pr.pc.res, pr.pc.err)
}

// task is the gateway's task of the call, nil before it is made.
func (pr *promotion) task() (*tasks.Store, string) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return pr.store, pr.id
}

// asker is ask until the task is made, then the task's (its
// inputRequests).
func (pr *promotion) asker(ask tool.AskFunc) tool.AskFunc {
	return func(ctx context.Context, a tool.Ask) (json.RawMessage, error) {
		if store, id := pr.task(); store != nil {
			return store.Ask(ctx, id, a.Method, a.Params)
		}
		return ask(ctx, a)
	}
}

// inputs is inputs until the task is made, then the task's.
func (pr *promotion) inputs(inputs tool.InputsFunc) tool.InputsFunc {
	return func(ctx context.Context, round map[string]tool.Ask) (map[string]json.RawMessage, error) {
		if store, id := pr.task(); store != nil {
			return store.AskRound(ctx, id, inputRequests(round))
		}
		return inputs(ctx, round)
	}
}
