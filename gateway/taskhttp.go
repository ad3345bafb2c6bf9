package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/internal/serverwire"
	"github.com/mcpbridge/mcpbridge/internal/tasks"
)

// Tasks on stateful Streamable HTTP sessions. The SDK's handler answers
// no method it does not know, and its server would drop a tools/call's
// "task": the requests of tasks are answered here, before it, with a
// JSON body, from the store of the session the request names. The
// session is the caller's: bindSessions, which runs first, refuses an id
// presented by another identity. initialize's answer gets the "tasks"
// capability (sdkwire.CapabilityWriter). Stateless mode has the
// 2026-07-28 extension instead (taskext.go).

// httpTaskBook holds the tasks of stateless mode's identities that have
// some (a stateful session's are in its state). The zero value is ready
// to use.
type httpTaskBook struct {
	mu       sync.Mutex
	byOwner  map[string]*ownerStore // by identity (taskext.go); guarded by mu
	wg       sync.WaitGroup         // the watchers that close them, and the leases' renewer
	renewing bool                   // the renewer of the shared tasks' leases runs (taskshare.go); guarded by mu
	// takeovers are the backends' tasks of the shared tasks (tasktakeover.go).
	takeovers takeovers
}

// httpTasks answers the requests of tasks before next (the SDK's handler).
func (g *Gateway) httpTasks(next http.Handler) http.Handler {
	perRequest := g.statelessTasks(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.stateless(r) {
			perRequest.ServeHTTP(w, r)
			return
		}
		req := taskRequest(r)
		switch {
		case req == nil:
			next.ServeHTTP(w, r)
		case req.Method == "initialize":
			cw := sdkwire.NewCapabilityWriter(w, taskCapability)
			next.ServeHTTP(cw, r)
			if err := cw.Finish(); err != nil {
				g.log.Debug("answering initialize", "err", err)
			}
		default:
			g.serveTaskPOST(w, r, req, next)
		}
	})
}

// taskRequest returns the request r posts when it may be one of tasks
// (or an initialize without a session), nil for any other. The body is
// in memory (screen read it) and stays readable.
func taskRequest(r *http.Request) *jsonrpc.Request {
	if r.Method != http.MethodPost || r.Body == nil {
		return nil
	}
	body, err := readBody(r)
	if err != nil || !mayBeTaskRequest(body) {
		return nil // the common case, without decoding
	}
	msg, err := jsonrpc.DecodeMessage(body)
	req, ok := msg.(*jsonrpc.Request)
	if err != nil || !ok || !req.IsCall() {
		return nil
	}
	if req.Method == "initialize" && r.Header.Get("Mcp-Session-Id") != "" {
		return nil
	}
	return req
}

// readBody returns r's body, leaving it readable: screen's bytes without
// a copy (bodyOf), or read (any other body, as when a test serves without
// screen).
func readBody(r *http.Request) ([]byte, error) {
	if body := bodyOf(r); body != nil {
		return body, nil
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, err
}

// mayBeTaskRequest reports whether body may hold a request of tasks: a
// tasks/* method, a "task" param, the extension's name, or initialize.
func mayBeTaskRequest(body []byte) bool {
	return bytes.Contains(body, []byte(`"task`)) || bytes.Contains(body, []byte(tasks.Extension)) || bytes.Contains(body, []byte(`"initialize"`))
}

// serveTaskPOST answers req, posted in r, when it is one of tasks of the
// session r names; else next does.
func (g *Gateway) serveTaskPOST(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request, next http.Handler) {
	ss := g.sessionByID(r.Header.Get("Mcp-Session-Id"))
	if ss == nil || !tasks.Handles(req.Method) && req.Method != "tasks/update" && req.Method != "tools/call" {
		next.ServeHTTP(w, r)
		return
	}
	st := g.httpTasksOf(ss)
	if st == nil {
		next.ServeHTTP(w, r)
		return
	}
	run := g.sessionTaskBody(ss, st, st, req, r.Header.Clone())
	if run == nil {
		next.ServeHTTP(w, r)
		return
	}
	raw, err := run(r.Context())
	writeAnswer(w, r, req.ID, raw, err)
}

// writeAnswer writes the JSON-RPC response to request id, posted in r:
// raw, or err, with the HTTP status the SDK's handler gives the error of
// a 2026-07-28 request (serverwire.ErrorStatus), so that an answer of the
// gateway's reads as the SDK's would (an unknown tool's, above all).
func writeAnswer(w http.ResponseWriter, r *http.Request, id jsonrpc.ID, raw json.RawMessage, err error) {
	resp := &jsonrpc.Response{ID: id, Result: raw}
	if err != nil {
		wire, ok := errors.AsType[*jsonrpc.Error](err)
		if !ok {
			wire = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		resp.Result, resp.Error = nil, wire
	}
	frame, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		http.Error(w, "encoding the answer: "+err.Error(), http.StatusInternalServerError) // unreachable: raw is valid JSON
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if status := serverwire.ErrorStatus(resp.Error); status != 0 && r.Header.Get("Mcp-Protocol-Version") == serverwire.PerRequestVersion {
		w.WriteHeader(status)
	}
	w.Write(frame)
}

// httpTasksOf returns the tasks of HTTP session ss, made on first use;
// nil once the gateway is closed, or for a session the gateway keeps no
// state of. They end with the session (end), or at Close.
func (g *Gateway) httpTasksOf(ss *mcp.ServerSession) *sessionTasks {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.stateLocked(ss)
	if st == nil || g.closed {
		return nil
	}
	if st.tasks == nil {
		st.tasks = newSessionTasks(!sdkwire.TakesCalls(ss)) // a session's protocol is fixed
	}
	return st.tasks
}
