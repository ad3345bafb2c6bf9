package gateway

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/internal/serverwire"
	"github.com/mcpbridge/mcpbridge/internal/tasks"
	"github.com/mcpbridge/mcpbridge/tool"
)

// Tasks of the 2026-07-28 extension (io.modelcontextprotocol/tasks): in
// stateless mode, the way 2026-07-28 clients reach the gateway over HTTP,
// and on 2026-07-28 sessions of stdio-like connections (takeTasks) and
// HTTP sessions (takeTasks as well), where the tasks are the session's. A request
// carries its client's capabilities in its _meta: a tools/call
// from a client that declares the extension, of a tool the gateway lists
// as supporting tasks (a backend's task tool), is admitted as a call is
// (startTask), then answered with a task of the gateway's
// ("resultType":"task"), whose call runs in the background; a refused
// call gets the refusal and no task. tasks/get carries its result when it ends; a backend's
// question meanwhile becomes one of its inputRequests, which the client
// answers with tasks/update (the gateway cannot ask a stateless client in
// the middle of a call). A backend task's JSON-RPC error fails the task
// with that error; tasks/cancel answers the bare ack and dismisses the
// task, which then reads cancelled (or the end it had). A tool whose
// backend decides about tasks is relayed round by round instead
// (taskrelay.go). In stateless mode there are no sessions: a task
// belongs to the identity that made it, and another identity gets the
// "no task" of an unknown id. Without authentication every client is the same anonymous
// one: a task's 128-bit id is then the only key to it (the extension has
// no tasks/list). Bounds as for a session's tasks (16, kept 10 minutes),
// for at most maxTaskOwners identities holding tasks at once; the calls
// in flight of one identity's tasks (else of one address's) are bounded
// as a session's (MaxCallsPerSession); Close cancels them all, but those
// it hands to the other replicas (taskhandover.go).

// maxTaskOwners bounds the identities holding tasks in stateless mode.
const maxTaskOwners = 1024

// errTooManyOwners refuses a task when maxTaskOwners identities hold some.
var errTooManyOwners = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "too many identities hold tasks on this gateway; try again later"}

// statelessTaskBody returns the body that answers req, a request of a
// stateless POST's session (takeStateless), with the extension's tasks of
// its caller's identity (a stateless client has no session: its tasks
// are its identity's), or nil to leave req to the rest of the take. It
// decides from req alone; the identity is the POST's, read from the
// body's context.
func (g *Gateway) statelessTaskBody(req *jsonrpc.Request) sdkwire.TakenCall {
	if !mayBeTasks(req) || req.Method == "tools/call" && !bytes.Contains(req.Params, []byte(tasks.Extension)) {
		return nil // the common call, told apart before its body is built: no session declared the extension
	}
	header := headerOf(req)
	if g.extBody(extTasks{}, req, header) == nil {
		return nil
	}
	return func(ctx context.Context) (json.RawMessage, error) {
		body := g.extBody(g.identityTasks(ctx), req, header)
		if body == nil {
			return nil, errTaskToolGone
		}
		return body(ctx)
	}
}

// errTaskToolGone answers a task call whose tool stopped being run as a
// task between its take and its run (its backend's list changed): taken,
// it can no longer go the plain call's way, and a retry does.
var errTaskToolGone = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the tool's list changed as the call arrived; call it again"}

// identityTasks is where the extension's tasks of the stateless request
// ctx is of are kept: its identity's (ownerTasks, made on its first
// task), shared with the other replicas when the config has a store.
func (g *Gateway) identityTasks(ctx context.Context) extTasks {
	owner := identityIn(ctx)
	return extTasks{caller: g.placeOf(ctx, callRequest{}).key, answer: g.sharedAnswer(owner),
		tasks: func() *sessionTasks { return cmp.Or(g.ownerTasks(owner), g.ownerBook.noTasks()) },
		start: func(start func(*sessionTasks) (json.RawMessage, error)) (json.RawMessage, error) {
			return g.startOwnerTask(owner, start)
		}}
}

// ownerTaskBook holds the tasks of stateless mode's identities that have
// some (a session's are in its state: taskBook). The zero value is ready
// to use.
type ownerTaskBook struct {
	mu       sync.Mutex
	byOwner  map[string]*ownerStore // by identity (taskext.go); guarded by mu
	wg       sync.WaitGroup         // the watchers that close them, and the leases' renewer
	renewing bool                   // the renewer of the shared tasks' leases runs (taskshare.go); guarded by mu
	// takeovers are the backends' tasks of the shared tasks (tasktakeover.go).
	takeovers takeovers
	none      *sessionTasks // answers the ids of no identity: "no task"; made on first use, guarded by mu
}

// noTasks returns the store of no identity, where every id is unknown.
func (b *ownerTaskBook) noTasks() *sessionTasks {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.none == nil {
		b.none = newSessionTasks(true)
	}
	return b.none
}

// extTasks is where the extension's tasks of a request are kept.
type extTasks struct {
	// tasks returns the store the requests of existing tasks read.
	tasks func() *sessionTasks
	// start calls start with the store a new task goes to, made if need
	// be.
	start func(start func(*sessionTasks) (json.RawMessage, error)) (json.RawMessage, error)
	// session is the client session on a stream connection, nil in
	// stateless mode.
	session *mcp.ServerSession
	// caller is whose call slots a stateless task takes (callRequest's).
	caller string
	// answer, when set, answers the requests of existing tasks instead of
	// tasks' store: the tasks the replicas share (taskshare.go).
	answer func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// extBody returns the body that answers req with the extension's tasks
// of x, or nil to leave it to the SDK (a plain call). It does not block:
// it may run on a connection's read loop.
func (g *Gateway) extBody(x extTasks, req *jsonrpc.Request, header http.Header) sdkwire.TakenCall {
	if tasks.Handles(req.Method) || req.Method == "tasks/update" {
		if removedByExtension(req.Method) {
			// Not found, as an unknown method the SDK answers: not the
			// Observer's either.
			return x.answerBody(req, header)
		}
		return g.seenFirst(x.session, req.Method, x.answerBody(req, header))
	}
	p, ok := extCall(req, x.session)
	if !ok || !(*g.taskTools.Load())[p.Name] {
		return nil // a plain call (as every call is before the backends are ready)
	}
	call := taskCallRequest(x.session, header, p)
	call.caller = x.caller
	if p.RequestState != "" || (*g.serverTaskTools.Load())[p.Name] {
		// A call again with answers goes on with the call parked under
		// its state (serveRetry), however that call began.
		return func(ctx context.Context) (json.RawMessage, error) { return g.relayServerTask(ctx, call, x) }
	}
	return func(ctx context.Context) (json.RawMessage, error) {
		// Admitted before the store is chosen: the owners' book is locked
		// while a stateless identity's store is found and the task started.
		return g.startTask(ctx, call, true, func(a *admission) (json.RawMessage, error) {
			return x.start(func(st *sessionTasks) (json.RawMessage, error) {
				return st.store.Start(noteCall(a.detached(), a.gcall), func(ctx context.Context) (json.RawMessage, error) { return g.runExtTask(ctx, a, st.store) })
			})
		})
	}
}

// answerBody is the body that answers req, a tasks request of the
// extension (tasks/get, tasks/update, tasks/cancel, and the removed
// ones, which are refused), with x's tasks; header is the HTTP request's.
func (x extTasks) answerBody(req *jsonrpc.Request, header http.Header) sdkwire.TakenCall {
	method, params := req.Method, req.Params
	if err := cmp.Or(extTasksRefusal(method, params, x.session), taskNameMismatch(header, params)); err != nil {
		return func(context.Context) (json.RawMessage, error) { return nil, err }
	}
	return func(ctx context.Context) (json.RawMessage, error) {
		answer := x.answer
		if answer == nil {
			answer = func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
				st := x.tasks()
				if st == nil {
					return nil, errSessionClosed // the session ended
				}
				return jsonrpcErr(st.store.Answer(ctx, method, params))
			}
		}
		raw, err := answer(ctx, method, params)
		return completeResult(raw, err)
	}
}

// removedByExtension reports whether method is one of the tasks methods
// of 2025-11-25 that the extension removed (tasks/list, the blocking
// tasks/result).
func removedByExtension(method string) bool {
	return method == "tasks/list" || method == "tasks/result"
}

// completeResult marks a result of tasks/get, tasks/update or
// tasks/cancel "resultType":"complete", as 2026-07-28 wants of every
// result but a created task's (SEP-2322); the stores answer the
// extension's fields alone.
func completeResult(raw json.RawMessage, err error) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err != nil || json.Unmarshal(raw, &m) != nil || m == nil || m["resultType"] != nil {
		return raw, err
	}
	m["resultType"] = json.RawMessage(`"complete"`)
	return json.Marshal(m)
}

// taskNameMismatch refuses a tasks request whose Mcp-Name header is not
// the taskId of its body (-32020, SEP-2243 as SEP-2663 extends it to the
// tasks methods), nil when they match or the header is absent.
func taskNameMismatch(header http.Header, params json.RawMessage) error {
	name := strings.TrimSpace(header.Get("Mcp-Name"))
	if name == "" {
		return nil
	}
	var p struct {
		TaskID string `json:"taskId"`
	}
	if json.Unmarshal(params, &p) == nil && p.TaskID == name {
		return nil
	}
	return &jsonrpc.Error{Code: mcp.CodeHeaderMismatch,
		Message: fmt.Sprintf("header Mcp-Name %q is not the request's taskId %q: send the taskId as Mcp-Name", name, p.TaskID)}
}

// extTasksRefusal is the error that answers a tasks request of the
// extension before any task is looked up, nil for one to answer: the
// methods the extension removed (2025-11-25's tasks/list and blocking
// tasks/result) are not found (-32601), as they are on a backend that
// speaks it, and a client that declared the extension neither in its
// session nor in the request's _meta gets -32021, the capability it must
// declare in the error's data.
func extTasksRefusal(method string, params json.RawMessage, session *mcp.ServerSession) error {
	if removedByExtension(method) {
		return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
			Message: method + " was removed by the tasks extension of 2026-07-28 (" + tasks.Extension + "): poll tasks/get for a task's status and result"}
	}
	if sessionDeclaresExtension(session) {
		return nil
	}
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	if json.Unmarshal(params, &p) == nil && declaresExtension(p.Meta) {
		return nil
	}
	// Not mcp.ClientCapabilities, which would add an empty roots.
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{tasks.Extension: map[string]any{}}}})
	return &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Data: data,
		Message: method + " needs the client capability extensions[\"" + tasks.Extension + "\"]: declare it in the request's _meta clientCapabilities"}
}

// extCall reads a tools/call from a client that declares the extension
// (in the request's _meta, or when it opened session), and reports false
// for any other request.
func extCall(req *jsonrpc.Request, session *mcp.ServerSession) (*mcp.CallToolParamsRaw, bool) {
	declared := sessionDeclaresExtension(session)
	if req.Method != "tools/call" || !declared && !bytes.Contains(req.Params, []byte(tasks.Extension)) {
		return nil, false
	}
	var p struct {
		Name           string
		Arguments      json.RawMessage
		Meta           map[string]any
		RequestState   string
		InputResponses mcp.InputResponseMap
	}
	// The exact keys, as the SDK reads a call (case-sensitive: "NAME" is
	// another member), so that what the Mcp-Name check saw is what runs.
	var m map[string]json.RawMessage
	member := func(key string, v any) bool { raw, ok := m[key]; return !ok || json.Unmarshal(raw, v) == nil }
	if json.Unmarshal(req.Params, &m) != nil || !member("name", &p.Name) || !member("_meta", &p.Meta) ||
		!member("requestState", &p.RequestState) || !member("inputResponses", &p.InputResponses) {
		return nil, false
	}
	p.Arguments = m["arguments"]
	if p.Name == "" || !declared && !declaresExtension(p.Meta) {
		return nil, false
	}
	switch {
	case len(p.Arguments) == 0 || string(p.Arguments) == "null":
		p.Arguments = json.RawMessage(`{}`)
	case p.Arguments[0] != '{':
		return nil, false // not an object: the SDK's invalid params, as for any call
	}
	return &mcp.CallToolParamsRaw{Name: p.Name, Arguments: p.Arguments, Meta: p.Meta, RequestState: p.RequestState, InputResponses: p.InputResponses}, true
}

// declaresExtension reports whether a request's _meta names a client
// that declares the tasks extension.
func declaresExtension(meta map[string]any) bool {
	caps, _ := meta[mcp.MetaKeyClientCapabilities].(map[string]any)
	exts, _ := caps["extensions"].(map[string]any)
	_, ok := exts[tasks.Extension]
	return ok
}

// sessionDeclaresExtension reports whether the client of session (nil in
// stateless mode) declared the tasks extension when it opened it.
func sessionDeclaresExtension(session *mcp.ServerSession) bool {
	if session == nil {
		return false
	}
	caps := clientCapabilities(session)
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[tasks.Extension]
	return ok
}

// runExtTask is the body of an extension task: the admitted call, as
// background work, its questions put to the client as the task's
// inputRequests (markAsks).
func (g *Gateway) runExtTask(ctx context.Context, a *admission, store *tasks.Store) (json.RawMessage, error) {
	id := tasks.IDFrom(ctx)
	a.runsAs(store, id)
	ctx = withTaskMark(tool.WithBackground(ctx), &taskMark{store: store, id: id, ext: true})
	ctx = g.withBackendTask(ctx, store, id, a.name)
	// A backend's round of questions (its task's inputRequests) becomes
	// the task's, all at once, under the backend's keys.
	ctx = tool.WithInputs(ctx, func(ctx context.Context, round map[string]tool.Ask) (map[string]json.RawMessage, error) {
		return store.AskRound(ctx, id, inputRequests(round))
	})
	if a.req.session == nil {
		ctx = tool.WithAsk(ctx, markAsks(ctx, nil)) // run adds no asker without a session
	}
	return extTaskEnd(a.run(ctx))
}

// extTaskEnd is the end of an extension task whose call ended with res
// and err: a backend's JSON-RPC error (its task failed) fails the task
// with it, its code kept (tasks/get's inline error).
func extTaskEnd(res result, err error) (json.RawMessage, error) {
	if wire, ok := errors.AsType[*jsonrpc.Error](err); ok {
		return nil, &tasks.Error{Code: int(wire.Code), Message: wire.Message}
	}
	if err != nil {
		return nil, err
	}
	return serverwire.CallResultJSON(res.isError, res.content, res.structured), nil
}

// inputRequests is round as a server writes its inputRequests.
func inputRequests(round map[string]tool.Ask) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(round))
	for key, a := range round {
		out[key] = mustJSON(inputRequest{Method: a.Method, Params: a.Params})
	}
	return out
}

// ownerStore is the extension tasks of one identity in stateless mode.
type ownerStore struct {
	*sessionTasks
	retired chan struct{} // closed when the identity is forgotten: its watcher closes the store
}

// ownerTasks returns the extension tasks of owner, nil when it holds
// none.
func (g *Gateway) ownerTasks(owner string) *sessionTasks {
	b := &g.ownerBook
	b.mu.Lock()
	defer b.mu.Unlock()
	if st := b.byOwner[owner]; st != nil {
		return st.sessionTasks
	}
	return nil
}

// startOwnerTask calls start with the extension tasks of owner, made if
// need be, under the book's lock: an identity whose tasks are all gone
// may be forgotten (retireIdleLocked), but not between finding its store
// and starting a task in it.
func (g *Gateway) startOwnerTask(owner string, start func(*sessionTasks) (json.RawMessage, error)) (json.RawMessage, error) {
	b := &g.ownerBook
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.byOwner[owner]
	if st == nil {
		if st = g.newOwnerLocked(owner); st == nil {
			return nil, errTooManyOwners
		}
	}
	return start(st.sessionTasks)
}

// newOwnerLocked makes the extension tasks of owner, unless the gateway
// closed or maxTaskOwners identities hold tasks; a watcher closes them
// when the gateway closes or the identity is forgotten. A task made
// while the config has a store is shared (taskshare.go); one made
// without costs nothing more than the process's memory. b.mu is held.
func (g *Gateway) newOwnerLocked(owner string) *ownerStore {
	b := &g.ownerBook
	if g.isClosed() || len(b.byOwner) >= maxTaskOwners && !b.retireIdleLocked() {
		return nil
	}
	if b.byOwner == nil {
		b.byOwner = map[string]*ownerStore{}
	}
	st := &ownerStore{retired: make(chan struct{})} // the owner's, not one request's
	// A task whose end is in the task store keeps no result here: reads
	// go there.
	st.sessionTasks = g.sharingTasks(owner, func(id string) { st.store.Kept(id) })
	b.byOwner[owner] = st
	if !b.renewing {
		b.renewing = true
		b.wg.Go(g.renewLoop)
	}
	b.wg.Go(func() {
		select {
		case <-g.done:
		case <-st.retired: // it holds no task
		}
		if err := st.close(time.Now().Add(g.timeout), errClosing); err != nil {
			g.log.Warn("closing the tasks of an identity", "err", err)
		}
	})
	return st
}

// retireIdleLocked forgets the identities that hold no task any more
// (each collected, cancelled, or forgotten taskKeep after it ended), and
// reports whether there were any: kept for good, the first
// maxTaskOwners identities to make a task would have been the only ones
// ever to get one again. b.mu is held.
func (b *ownerTaskBook) retireIdleLocked() bool {
	n := len(b.byOwner)
	for owner, st := range b.byOwner {
		if st.store.Held() == 0 {
			delete(b.byOwner, owner)
			close(st.retired)
		}
	}
	return len(b.byOwner) < n
}
