package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/internal/tasks"
	"github.com/mcpbridge/mcpbridge/tool"
)

// Tasks of the 2026-07-28 extension (io.modelcontextprotocol/tasks) in
// stateless mode, the way 2026-07-28 clients reach the gateway. A
// request carries its client's capabilities in its _meta: a tools/call
// from a client that declares the extension, of a tool the gateway lists
// as supporting tasks (a backend's task tool), is answered with a task of
// the gateway's ("resultType":"task"), whose call runs in the
// background. tasks/get carries its result when it ends; a backend's
// question meanwhile becomes one of its inputRequests, which the client
// answers with tasks/update (the gateway cannot ask a stateless client in
// the middle of a call). There are no sessions: a task belongs to the
// identity that made it, and another identity gets the "no task" of an
// unknown id. Without authentication every client is the same anonymous
// one: a task's 128-bit id is then the only key to it, and tasks/list
// lists nothing. Bounds as for a session's tasks (16, kept 10 minutes),
// for at most maxTaskOwners identities; Close cancels them all.

// maxTaskOwners bounds the identities holding tasks in stateless mode.
const maxTaskOwners = 1024

// errTooManyOwners refuses a task when maxTaskOwners identities hold some.
var errTooManyOwners = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "too many identities hold tasks on this gateway; try again later"}

// statelessTasks answers the requests of the extension's tasks before
// next (the SDK's handler).
func (g *Gateway) statelessTasks(next http.Handler) http.Handler {
	none := newSessionTasks(context.Background(), true) // answers ids of no owner: "no task"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := taskRequest(r)
		if req == nil {
			next.ServeHTTP(w, r)
			return
		}
		owner := identityOf(r)
		run := g.extBody(r.Context(), owner, none, req, r.Header.Clone())
		if run == nil {
			next.ServeHTTP(w, r)
			return
		}
		raw, err := run(r.Context())
		writeAnswer(w, req.ID, raw, err)
	})
}

// extBody returns the body that answers req for owner, or nil to leave
// it to the SDK. none answers for an owner that holds no tasks.
func (g *Gateway) extBody(ctx context.Context, owner string, none *sessionTasks, req *jsonrpc.Request, header http.Header) sdkwire.TakenCall {
	if tasks.Handles(req.Method) || req.Method == "tasks/update" {
		method, params := req.Method, req.Params
		return func(ctx context.Context) (json.RawMessage, error) {
			if method == "tasks/list" && owner == "" {
				return json.RawMessage(`{"tasks":[]}`), nil
			}
			st := g.ownerTasks(owner, false)
			if st == nil {
				st = none
			}
			return jsonrpcErr(st.store.Answer(ctx, method, params))
		}
	}
	p, ok := extCall(req)
	if !ok || !g.awaitReady(ctx, "tools/call") || !(*g.taskTools.Load())[p.Name] {
		return nil // a plain call
	}
	return func(ctx context.Context) (json.RawMessage, error) {
		st := g.ownerTasks(owner, true)
		if st == nil {
			return nil, errTooManyOwners
		}
		return jsonrpcErr(st.store.Start(st.base, func(ctx context.Context) (json.RawMessage, error) {
			return g.runExtTask(ctx, callRequest{header: header, params: p}, st.store)
		}))
	}
}

// extCall reads a tools/call from a client that declares the extension,
// and reports false for any other request.
func extCall(req *jsonrpc.Request) (*mcp.CallToolParamsRaw, bool) {
	if req.Method != "tools/call" || !bytes.Contains(req.Params, []byte(tasks.Extension)) {
		return nil, false
	}
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      map[string]any  `json:"_meta"`
	}
	if json.Unmarshal(req.Params, &p) != nil || p.Name == "" || !declaresExtension(p.Meta) {
		return nil, false
	}
	if len(p.Arguments) == 0 {
		p.Arguments = json.RawMessage(`{}`)
	}
	return &mcp.CallToolParamsRaw{Name: p.Name, Arguments: p.Arguments, Meta: p.Meta}, true
}

// declaresExtension reports whether a request's _meta names a client
// that declares the tasks extension.
func declaresExtension(meta map[string]any) bool {
	caps, _ := meta[mcp.MetaKeyClientCapabilities].(map[string]any)
	exts, _ := caps["extensions"].(map[string]any)
	_, ok := exts[tasks.Extension]
	return ok
}

// runExtTask is the body of an extension task: the call, as background
// work, its questions put to the client as the task's inputRequests.
func (g *Gateway) runExtTask(ctx context.Context, req callRequest, store *tasks.Store) (json.RawMessage, error) {
	id := tasks.IDFrom(ctx)
	ctx = tool.WithAsk(tool.WithBackground(ctx), func(ctx context.Context, a tool.Ask) (json.RawMessage, error) {
		return store.Ask(ctx, id, a.Method, a.Params)
	})
	res, err := g.serveCall(ctx, req)
	if err != nil {
		return nil, err
	}
	return sdkwire.CallResultJSON(res.isError, res.content, res.structured), nil
}

// ownerTasks returns the extension tasks of owner, made when create and
// there are fewer than maxTaskOwners; else nil. A watcher closes them
// when the gateway closes.
func (g *Gateway) ownerTasks(owner string, create bool) *sessionTasks {
	b := &g.httpTasksBook
	b.mu.Lock()
	defer b.mu.Unlock()
	if st, ok := b.byOwner[owner]; ok || !create {
		return st
	}
	if g.isClosed() || len(b.byOwner) >= maxTaskOwners {
		return nil
	}
	if b.byOwner == nil {
		b.byOwner = map[string]*sessionTasks{}
	}
	st := newSessionTasks(context.Background(), true) // the owner's, not one request's
	b.byOwner[owner] = st
	b.wg.Go(func() {
		<-g.done
		if err := st.close(time.Now().Add(g.timeout)); err != nil {
			g.log.Warn("closing the tasks of an identity", "err", err)
		}
	})
	return st
}
