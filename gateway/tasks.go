package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/internal/serverwire"
	"github.com/mcpbridge/mcpbridge/internal/tasks"
	"github.com/mcpbridge/mcpbridge/tool"
)

// Tasks through the gateway (MCP 2025-11-25, SEP-1686), on stdio-like
// sessions (ServeStdio, ServeTransport) and stateful Streamable HTTP
// sessions (httpTransport), taken beneath the SDK's session on either
// (takeTasks). A client that calls a tool as a
// task ("task" in the tools/call params) gets a task of the gateway's at
// once, if the call is admitted (startTask: its slot, the caller's view
// and the Gate, before the task exists; a refused call gets no task); the
// admitted call runs in the background (ended when the task ends),
// where the backend's own task is created and followed (mcpclient,
// internal/tasks: a tool with execution.taskSupport "optional" is called
// as a task too). The client's tasks/get, tasks/result, tasks/cancel and
// tasks/list are answered from its session's own store: the ids are
// 128 random bits, known only to the session that created them, so
// another session (and so another identity: sessions are bound to the
// one that opened them, bind.go) guessing, replaying or listing gets the
// "no task" any unknown id gets. The backend's task id never leaves the
// gateway. A task the client never collects is forgotten once the ttl
// it asked for (at most taskKeep, which a task asking none gets) passes
// after it ends; a session holds at most maxSessionTasks; its end cancels the
// tasks still running (and so the backends' tasks). A client that does
// not ask for a task gets the result as before.

// Bounds on the tasks of one client session.
const maxSessionTasks = 16

// taskKeep is how long an ended task is kept for its client to collect,
// the most a requested ttl gets; a variable for tests only.
var taskKeep = 10 * time.Minute

// taskCapability is the gateway's 2025-11-25 "tasks" server capability:
// tools/call as a task, tasks/list and tasks/cancel.
var taskCapability = map[string]json.RawMessage{
	"tasks": json.RawMessage(`{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`),
}

// optionalTask is the execution of a tool the gateway lists as
// supporting tasks: "optional" whatever the backend says, since the
// gateway runs it either way (a plain call of a task-required tool is
// followed to its result).
var optionalTask = json.RawMessage(`{"taskSupport":"optional"}`)

// withTaskSupport lists, on a session where the gateway offers tasks, the
// tools whose source runs them as background work as supporting tasks.
func (g *Gateway) withTaskSupport(ss *mcp.ServerSession, res mcp.Result, err error) (mcp.Result, error) {
	list, ok := res.(*mcp.ListToolsResult)
	names := g.taskTools.Load()
	if err != nil || !ok || names == nil || ss == nil || !sdkwire.TakesCalls(ss) {
		return res, err
	}
	return sdkwire.ToolsWithExecution(list, *names, optionalTask), nil
}

// relatedTask is the _meta key naming the task a message belongs to.
const relatedTask = "io.modelcontextprotocol/related-task"

// sessionTasks are the tasks of one client session.
type sessionTasks struct {
	store *tasks.Store
}

// newSessionTasks returns an empty store of tasks, in the shapes of the
// 2026-07-28 extension when ext.
func newSessionTasks(ext bool) *sessionTasks { return newTasksWith(tasks.StoreOptions{Extension: ext}) }

// newTasksWith is newSessionTasks of opts, bounded as a session's.
func newTasksWith(opts tasks.StoreOptions) *sessionTasks {
	opts.Max, opts.Keep = maxSessionTasks, taskKeep
	return &sessionTasks{store: tasks.NewStoreWith(opts)}
}

// close cancels the session's tasks, telling their calls why (cause),
// and waits for them until deadline.
func (st *sessionTasks) close(deadline time.Time, cause error) error {
	if !waitUntil(deadline, func() { st.store.CloseWith(cause) }) {
		return errors.New("gateway: tasks still running when the shutdown timeout passed: a tool ignores cancellation")
	}
	return nil
}

// takeTasks returns next with the requests of tasks of the session
// (see sessionTaskBody) taken first, on every transport the gateway
// serves a session over: stdio-like connections (serveTransport) and
// stateful Streamable HTTP (httpTransport.open). The tasks are the
// session's (its state's taskBook, ended with it): another session, and
// so another identity (an HTTP session is bound to the one that opened
// it, bind.go), has none of them.
func (g *Gateway) takeTasks(session *atomic.Pointer[mcp.ServerSession], next func(*jsonrpc.Request) sdkwire.TakenCall) func(*jsonrpc.Request) sdkwire.TakenCall {
	return func(req *jsonrpc.Request) sdkwire.TakenCall {
		if ss := session.Load(); ss != nil && mayBeTasks(req) {
			if run := g.sessionTaskBody(ss, req, headerOf(req)); run != nil {
				return run
			}
		}
		return next(req)
	}
}

// mayBeTasks reports whether req may be a request of tasks: a method of
// tasks, or a tools/call (taskBody and extBody tell a call as a task
// apart).
func mayBeTasks(req *jsonrpc.Request) bool {
	return req.Method == "tools/call" || tasks.Handles(req.Method) || req.Method == "tasks/update"
}

// headerOf is the HTTP request's headers req came with (for the Gate,
// and the Mcp-Name check of the extension), nil off HTTP.
func headerOf(req *jsonrpc.Request) http.Header {
	if extra, ok := req.Extra.(*mcp.RequestExtra); ok {
		return extra.Header
	}
	return nil
}

// taskCallRequest is the call of a task that the HTTP request of header (nil
// off HTTP) makes with params: its header a copy, since the task
// outlives the request, without the request's stream tag, since the
// task's call is not the request's and must not end when its stream
// drops; the stream kept apart (madeOn) for the task's admission, which
// the request still waits for.
func taskCallRequest(session *mcp.ServerSession, header http.Header, params *mcp.CallToolParamsRaw) callRequest {
	call := callRequest{session: session, params: params}
	if header != nil {
		call.madeOn = first(header, streamHeader)
		call.header = header.Clone()
		call.header.Del(streamHeader)
	}
	return call
}

// sessionTaskBody returns the body that answers req of client session ss
// with its tasks, or nil to leave req to the SDK: the 2025-11-25 ones on
// a session opened with initialize before 2026-07-28 (taskBody), the
// extension's otherwise (extBody, taskext.go). header is the HTTP
// request's, nil off HTTP.
func (g *Gateway) sessionTaskBody(ss *mcp.ServerSession, req *jsonrpc.Request, header http.Header) sdkwire.TakenCall {
	if sdkwire.TakesCalls(ss) {
		return g.taskBody(ss, req, header)
	}
	if refusedUninitialized(ss, req) {
		return nil
	}
	store := func() *sessionTasks { return g.tasksOf(ss, true) }
	return g.extBody(extTasks{tasks: store, session: ss,
		start: func(start func(*sessionTasks) (json.RawMessage, error)) (json.RawMessage, error) {
			st := store()
			if st == nil {
				return nil, errSessionClosed
			}
			return start(st)
		}}, req, header)
}

// taskBody returns the body that answers req, a request of client session
// ss, which answers its calls beneath the SDK (sdkwire.TakesCalls: before
// 2026-07-28, whose shapes these are; sessionTaskBody checked, once per
// request, as the session's lock is shared by its concurrent calls), when
// it is one of tasks: tasks/* or a tools/call as a task. header is the
// HTTP request's, nil off HTTP. nil leaves req to the SDK.
func (g *Gateway) taskBody(ss *mcp.ServerSession, req *jsonrpc.Request, header http.Header) sdkwire.TakenCall {
	if tasks.Handles(req.Method) {
		method, params := req.Method, append(json.RawMessage(nil), req.Params...)
		stream := header.Get(streamHeader)
		return func(ctx context.Context) (json.RawMessage, error) {
			g.seen(ctx, ss, method)
			st := g.tasksOf(ss, false)
			if st == nil {
				return nil, errSessionClosed
			}
			if method == "tasks/result" {
				// It waits for the task's end: on HTTP, as long as its
				// client is there to read the answer (its stream, as a
				// call's: serveMCP).
				var end func()
				ctx, end = g.awaitOn(ctx, ss, stream)
				defer end()
			}
			return jsonrpcErr(st.store.Answer(ctx, method, params))
		}
	}
	if req.Method != "tools/call" {
		return nil
	}
	p, ok := taskCall(req.Params)
	if !ok {
		return nil
	}
	call, ttl := taskCallRequest(ss, header, p), tasks.RequestedTTL(req.Params)
	return func(ctx context.Context) (json.RawMessage, error) {
		return g.startTask(ctx, call, false, func(a *admission) (json.RawMessage, error) {
			st := g.tasksOf(ss, false)
			if st == nil {
				return nil, errSessionClosed
			}
			return st.store.StartTTL(a.detached(), ttl, func(ctx context.Context) (json.RawMessage, error) { return g.runTask(ctx, a, st.store) })
		})
	}
}

// awaitOn returns ctx, for a request of session that waits (a blocking
// tasks/result, a request waiting for readiness: awaitReadyOn, a
// prompts/get or resources/read waiting for its backend: admitOffer),
// ended as a call's is when its HTTP request stream is given up on (the
// client left and did not resume it in time), its session closes or the
// gateway does; end lets go of it. Off HTTP (stream "") only the last
// two apply: the client cancels what it leaves.
func (g *Gateway) awaitOn(ctx context.Context, session *mcp.ServerSession, stream string) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	c := &inflight{session: session, cancel: cancel, stream: stream}
	if err := g.track(c); err != nil {
		cancel(err)
		return ctx, func() {}
	}
	if g.streamGone(stream) {
		cancel(errStreamGone) // its client left while it was read
	}
	return ctx, func() {
		g.untrack(c)
		cancel(nil)
	}
}

// startTask admits req, a call as a task, and has start start its task,
// whose body runs the admitted call. The task is gated before it exists:
// a call the caller is not served, or that the Gate refuses, is answered
// as a plain call would be, and gets no task (a refusal that is an
// isError result is that result, in the shapes of the extension when
// ext). The admission lasts the task's whole life: its body ends it.
func (g *Gateway) startTask(ctx context.Context, req callRequest, ext bool, start func(*admission) (json.RawMessage, error)) (json.RawMessage, error) {
	a, res, err := g.admit(ctx, req)
	if a == nil {
		if err != nil {
			return nil, err
		}
		return g.refusedTask(res, ext), nil
	}
	raw, err := start(a)
	if err != nil {
		a.abandon(err) // no body will run it
	}
	return jsonrpcErr(raw, err)
}

// refusedTask is the answer to a call as a task that the Gate refused
// with an isError result: that result, with no task; at 2026-07-28 (ext)
// as the SDK's server stamps a complete result.
func (g *Gateway) refusedTask(res result, ext bool) json.RawMessage {
	if ext {
		return serverwire.CallResultJSONPerRequest(res.isError, res.content, res.structured, g.serverInfo)
	}
	return serverwire.CallResultJSON(res.isError, res.content, res.structured)
}

// taskCall reads the params of a tools/call that asks to run as a task,
// and reports false for any other (or params the take leaves to the
// SDK).
func taskCall(params json.RawMessage) (*mcp.CallToolParamsRaw, bool) {
	if !mayNameTask(params) || !tasks.IsAugmented(params) {
		return nil, false
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(params, &members) != nil {
		return nil, false
	}
	delete(members, "task")
	rest, err := json.Marshal(members)
	if err != nil {
		return nil, false
	}
	p, ok := serverwire.ReadCallParams(rest)
	if !ok {
		return nil, false
	}
	return &mcp.CallToolParamsRaw{Meta: p.Meta, Name: p.Name, Arguments: p.Arguments}, true
}

// mayNameTask tells the common call apart without reading its params:
// false when no member can be named "task" (spelled so, or with escapes).
func mayNameTask(params json.RawMessage) bool {
	return bytes.Contains(params, []byte(`"task"`)) || bytes.Contains(params, []byte(`\u`))
}

// runTask is the body of a task: the admitted call, as background work
// where its source offers it, its questions to the client marking the
// task input_required, and its result naming the task.
func (g *Gateway) runTask(ctx context.Context, a *admission, store *tasks.Store) (json.RawMessage, error) {
	id := tasks.IDFrom(ctx)
	ctx = withTaskMark(tool.WithBackground(ctx), &taskMark{store: store, id: id})
	res, err := a.run(ctx)
	if err != nil {
		return nil, err
	}
	return withMeta(serverwire.CallResultJSON(res.isError, res.content, res.structured), relatedTask, taskRef(id)), nil
}

// taskMark is the task a call runs for, so that its questions to the
// client mark it input_required while they wait.
type taskMark struct {
	store *tasks.Store
	id    string
	ext   bool // the extension's: questions go to the task's inputRequests

	mu     sync.Mutex
	asking int // questions waiting for the client; guarded by mu
}

type taskMarkKey struct{}

func withTaskMark(ctx context.Context, m *taskMark) context.Context {
	return context.WithValue(ctx, taskMarkKey{}, m)
}

// markAsks returns ask, which on a task's call also marks the task
// input_required while a question waits for the client, and names the
// task in the question's _meta; on an extension task's call, questions
// go to the task's inputRequests instead (tasks.Store.Ask).
func markAsks(ctx context.Context, ask tool.AskFunc) tool.AskFunc {
	m, _ := ctx.Value(taskMarkKey{}).(*taskMark)
	switch {
	case m == nil:
		return ask
	case m.ext:
		return func(ctx context.Context, a tool.Ask) (json.RawMessage, error) {
			return m.store.Ask(ctx, m.id, a.Method, a.Params)
		}
	}
	return func(ctx context.Context, a tool.Ask) (json.RawMessage, error) {
		m.note(+1, a.Method)
		defer m.note(-1, "")
		a.Params = withMeta(a.Params, relatedTask, taskRef(m.id))
		return ask(ctx, a)
	}
}

// note counts a question asked (+1) or answered (-1), and sets the task's
// status when the first starts or the last ends.
func (m *taskMark) note(delta int, method string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.asking += delta
	switch {
	case delta > 0 && m.asking == 1:
		m.store.SetStatus(m.id, tasks.InputRequired, "waiting for the client's answer to "+method)
	case delta < 0 && m.asking == 0:
		m.store.SetStatus(m.id, tasks.Working, "")
	}
}

func taskRef(id string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"taskId": id})
	return b
}

// withMeta returns the JSON object obj with _meta[key] set to value, the
// rest kept; obj itself when it is not an object.
func withMeta(obj json.RawMessage, key string, value json.RawMessage) json.RawMessage {
	var members map[string]json.RawMessage
	if json.Unmarshal(obj, &members) != nil || members == nil {
		return obj
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := members["_meta"]; ok && json.Unmarshal(raw, &meta) != nil {
		return obj
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[key] = value
	members["_meta"] = mustJSON(meta)
	return mustJSON(members)
}

// jsonrpcErr makes a tasks.Error the JSON-RPC error it stands for.
func jsonrpcErr(raw json.RawMessage, err error) (json.RawMessage, error) {
	if te, ok := errors.AsType[*tasks.Error](err); ok {
		return nil, &jsonrpc.Error{Code: int64(te.Code), Message: te.Message}
	}
	return raw, err
}
