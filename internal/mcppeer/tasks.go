package mcppeer

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TasksExtension is the id of the 2026-07-28 tasks extension (SEP-2663).
const TasksExtension = "io.modelcontextprotocol/tasks"

// Codes of the errors the task server answers with.
const (
	codeHeaderMismatch      = -32020
	codeMissingCapability   = -32021
	taskTTLMs               = 600000
	taskPollIntervalMs      = 200
	taskCapabilitiesMetaKey = "io.modelcontextprotocol/clientCapabilities"
)

// taskTool is one tool of the task server that may run as a task: its
// support ("optional": a sync call without the extension; "required":
// -32021 without it) and its body, run in the background.
type taskTool struct {
	support string
	run     func(ctx context.Context, t *fixtureTask, args json.RawMessage) (result json.RawMessage, err *RawError)
}

// NewTaskServer returns a stateless Streamable HTTP server of protocol
// 2026-07-28 with the tools the conformance suite's tasks-extension
// scenarios call (conformance 0.2: tasks-lifecycle, -mrtr-input, …),
// which the go-sdk everything-server lacks. The go-sdk server answers
// everything but the extension's wire, which the handler answers before
// it:
//
//   - greet {name} → "Hello, {name}!" (sync only);
//   - slow_compute {seconds, label} → sleeps, then "computed {label}";
//     a task when the request declares the extension, a sync call
//     otherwise; cancelled while it sleeps, it ends "cancelled";
//   - failing_job → a task that ends with an isError result after ~1s;
//   - protocol_error_job → a task that fails with a JSON-RPC error;
//   - confirm_delete {filename} → a task that asks one elicitation;
//   - multi_input → a task that asks two elicitations at once;
//   - test_tool_with_task → asks user_name as an input-required result,
//     then, answered, becomes a task whose result greets the name.
//
// Every tool but slow_compute requires the extension (-32021 without
// it). tasks/get, tasks/update and tasks/cancel answer the extension's
// shapes (each result with its resultType; -32602 for an unknown id;
// -32020 when Mcp-Name is not the body's taskId); the removed tasks/list
// and tasks/result answer -32601. Tasks live until Close.
func NewTaskServer() *TaskFixture {
	s := mcp.NewServer(&mcp.Implementation{Name: "tasks", Version: "1.0.0"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}, Extensions: map[string]any{TasksExtension: map[string]any{}}},
	})
	object := json.RawMessage(`{"type":"object"}`)
	s.AddTool(&mcp.Tool{Name: "greet", Description: "Greets someone.", InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct{ Name string }
			_ = json.Unmarshal(req.Params.Arguments, &a)
			return textResult("Hello, " + a.Name + "!"), nil
		})
	f := &TaskFixture{tasks: map[string]*fixtureTask{}, tools: fixtureTaskTools()}
	for name, tool := range f.tools {
		// The go-sdk server lists them and runs slow_compute without
		// the extension; the handler adds their execution to tools/list.
		s.AddTool(&mcp.Tool{Name: name, Description: "A task tool (" + tool.support + ").", InputSchema: object},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				res, rerr := tool.run(ctx, nil, req.Params.Arguments)
				if rerr != nil {
					return nil, fmt.Errorf("%s", rerr.Message)
				}
				var out mcp.CallToolResult
				if err := json.Unmarshal(res, &out); err != nil {
					return nil, err
				}
				return &out, nil
			})
	}
	f.next = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	return f
}

// TaskFixture is the task server: it answers the extension's wire
// before the go-sdk handler.
type TaskFixture struct {
	next    http.Handler
	tools   map[string]taskTool
	running sync.WaitGroup
	mu      sync.Mutex
	tasks   map[string]*fixtureTask
}

// Close cancels every task and waits for their ends.
func (f *TaskFixture) Close() {
	f.mu.Lock()
	for _, t := range f.tasks {
		t.cancel()
	}
	f.mu.Unlock()
	f.running.Wait()
}

// fixtureTask is one task of the task server. Its fields are guarded by
// the fixture's mu.
type fixtureTask struct {
	f                *TaskFixture
	id               string
	status           string // working, input_required, completed, failed, cancelled
	created, updated time.Time
	result           json.RawMessage
	err              *RawError
	inputRequests    map[string]json.RawMessage
	inputResponses   map[string]json.RawMessage
	answered         chan struct{} // closed when every input request has a response
	cancel           context.CancelFunc
}

// taskRequest is the part of a JSON-RPC request the handler reads.
type taskRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name           string                     `json:"name"`
		TaskID         string                     `json:"taskId"`
		Arguments      json.RawMessage            `json:"arguments"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
		Meta           map[string]json.RawMessage `json:"_meta"`
	} `json:"params"`
}

// declares reports whether the request declares the tasks extension in
// its per-request client capabilities.
func (r *taskRequest) declares() bool {
	var caps struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	_ = json.Unmarshal(r.Params.Meta[taskCapabilitiesMetaKey], &caps)
	_, ok := caps.Extensions[TasksExtension]
	return ok
}

func (f *TaskFixture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req taskRequest
	if r.Method != http.MethodPost || json.Unmarshal(body, &req) != nil || req.ID == nil {
		f.next.ServeHTTP(w, r)
		return
	}
	switch req.Method {
	case "tasks/list", "tasks/result":
		writeRPC(w, http.StatusOK, errorFrame(req.ID, codeMethodNotFound, req.Method+" was removed by the tasks extension (SEP-2663)"))
	case "tasks/get", "tasks/update", "tasks/cancel":
		f.taskMethod(w, r, &req)
	case "tools/call":
		tool, ok := f.tools[req.Params.Name]
		if !ok || (!req.declares() && tool.support == "optional") {
			f.next.ServeHTTP(w, r)
			return
		}
		writeRPC(w, http.StatusOK, f.call(&req, tool))
	case "tools/list":
		f.listTools(w, r)
	default:
		f.next.ServeHTTP(w, r)
	}
}

// writeRPC writes one JSON-RPC message.
func writeRPC(w http.ResponseWriter, status int, frame []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(frame)
}

// missingTasks is the -32021 of a request that needs the extension.
func missingTasks(id json.RawMessage) []byte {
	return mustMarshal(map[string]any{"jsonrpc": "2.0", "id": rawID(id), "error": map[string]any{
		"code": codeMissingCapability, "message": "this request needs the client capability extensions." + TasksExtension,
		"data": map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}}},
	}})
}

// listTools answers tools/list as the go-sdk server does, each task
// tool with its execution.taskSupport.
func (f *TaskFixture) listTools(w http.ResponseWriter, r *http.Request) {
	rec := &recorder{header: http.Header{}, code: http.StatusOK}
	f.next.ServeHTTP(rec, r)
	var msg map[string]json.RawMessage
	var result struct {
		Tools []map[string]any `json:"tools"`
	}
	if json.Unmarshal(rec.body.Bytes(), &msg) != nil || json.Unmarshal(msg["result"], &result) != nil {
		copyResponse(w, rec)
		return
	}
	for _, t := range result.Tools {
		if tool, ok := f.tools[t["name"].(string)]; ok {
			t["execution"] = map[string]string{"taskSupport": tool.support}
		}
	}
	var full map[string]any
	_ = json.Unmarshal(msg["result"], &full)
	full["tools"] = result.Tools
	msg["result"] = mustMarshal(full)
	writeRPC(w, rec.code, mustMarshal(msg))
}

// recorder keeps a response of the go-sdk handler (the package links no
// httptest).
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(code int)        { r.code = code }

// copyResponse writes what rec recorded.
func copyResponse(w http.ResponseWriter, rec *recorder) {
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.code)
	_, _ = w.Write(rec.body.Bytes())
}

// taskMethod answers tasks/get, tasks/update and tasks/cancel.
func (f *TaskFixture) taskMethod(w http.ResponseWriter, r *http.Request, req *taskRequest) {
	if m := r.Header.Get("Mcp-Method"); m != "" && strings.TrimSpace(m) != req.Method {
		writeRPC(w, http.StatusBadRequest, errorFrame(req.ID, codeHeaderMismatch, fmt.Sprintf("header Mcp-Method %q does not match the body's method %q", m, req.Method)))
		return
	}
	if n := r.Header.Get("Mcp-Name"); n != "" && strings.TrimSpace(n) != req.Params.TaskID {
		writeRPC(w, http.StatusBadRequest, errorFrame(req.ID, codeHeaderMismatch, fmt.Sprintf("header Mcp-Name %q does not match the body's taskId %q", n, req.Params.TaskID)))
		return
	}
	if !req.declares() {
		writeRPC(w, http.StatusOK, missingTasks(req.ID))
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.tasks[req.Params.TaskID]
	if t == nil {
		writeRPC(w, http.StatusOK, errorFrame(req.ID, codeInvalidParams, fmt.Sprintf("no task %q", req.Params.TaskID)))
		return
	}
	ack := map[string]any{"resultType": "complete"}
	switch req.Method {
	case "tasks/get":
		writeRPC(w, http.StatusOK, resultFrame(req.ID, t.detailed()))
	case "tasks/update":
		t.answer(req.Params.InputResponses)
		writeRPC(w, http.StatusOK, resultFrame(req.ID, ack))
	case "tasks/cancel":
		if !t.terminal() {
			t.settle("cancelled", nil, nil)
			t.cancel()
		}
		writeRPC(w, http.StatusOK, resultFrame(req.ID, ack))
	}
}

// call answers a tools/call of a task tool: -32021 without the
// extension, else an input-required round or a new task.
func (f *TaskFixture) call(req *taskRequest, tool taskTool) []byte {
	if !req.declares() {
		return missingTasks(req.ID)
	}
	args := req.Params.Arguments
	if req.Params.Name == "test_tool_with_task" {
		name, ok := answeredName(req.Params.InputResponses)
		if !ok {
			return resultFrame(req.ID, map[string]any{"resultType": "input_required",
				"inputRequests": map[string]any{"user_name": elicitation("What is your name?", "name")},
				"requestState":  "asked-user-name"})
		}
		args = mustMarshal(map[string]string{"name": name})
	}
	t := f.start(tool, args)
	f.mu.Lock()
	defer f.mu.Unlock()
	return resultFrame(req.ID, t.envelope("task"))
}

// answeredName is the name an elicitation response carries.
func answeredName(responses map[string]json.RawMessage) (string, bool) {
	for _, raw := range responses {
		var r struct {
			Action  string `json:"action"`
			Content struct {
				Name string `json:"name"`
			} `json:"content"`
		}
		if json.Unmarshal(raw, &r) == nil && r.Action == "accept" && r.Content.Name != "" {
			return r.Content.Name, true
		}
	}
	return "", false
}

// elicitation is an input request asking a form with one string field.
func elicitation(message, field string) map[string]any {
	return map[string]any{"method": "elicitation/create", "params": map[string]any{
		"mode": "form", "message": message,
		"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{field: map[string]string{"type": "string"}}},
	}}
}

// start makes a task of tool, stored before its id is answered, and runs
// it in the background.
func (f *TaskFixture) start(tool taskTool, args json.RawMessage) *fixtureTask {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	ctx, cancel := context.WithCancel(context.Background())
	now := time.Now().UTC()
	t := &fixtureTask{f: f, id: hex.EncodeToString(b), status: "working", created: now, updated: now, cancel: cancel}
	f.mu.Lock()
	f.tasks[t.id] = t
	f.mu.Unlock()
	f.running.Go(func() {
		defer cancel()
		res, rerr := tool.run(ctx, t, args)
		f.mu.Lock()
		defer f.mu.Unlock()
		if !t.terminal() {
			status := "completed"
			if rerr != nil {
				status = "failed"
			}
			t.settle(status, res, rerr)
		}
	})
	return t
}

// terminal reports whether the task has ended.
func (t *fixtureTask) terminal() bool {
	return t.status == "completed" || t.status == "failed" || t.status == "cancelled"
}

// settle ends the task.
func (t *fixtureTask) settle(status string, result json.RawMessage, err *RawError) {
	t.status, t.result, t.err, t.inputRequests = status, result, err, nil
	t.updated = time.Now().UTC()
}

// envelope is the task's flat fields under resultType.
func (t *fixtureTask) envelope(resultType string) map[string]any {
	return map[string]any{"resultType": resultType, "taskId": t.id, "status": t.status,
		"createdAt": t.created.Format(time.RFC3339Nano), "lastUpdatedAt": t.updated.Format(time.RFC3339Nano),
		"ttlMs": taskTTLMs, "pollIntervalMs": taskPollIntervalMs}
}

// detailed is the task as tasks/get answers it: its result, error or
// pending input requests inlined.
func (t *fixtureTask) detailed() map[string]any {
	d := t.envelope("complete")
	switch {
	case t.status == "completed":
		d["result"] = t.result
	case t.status == "failed":
		d["error"] = t.err
	case t.status == "input_required":
		d["inputRequests"] = t.inputRequests
	}
	return d
}

// ask parks the task in input_required with requests until each has a
// response (tasks/update, in as many rounds as the client likes), and
// returns the responses.
func (t *fixtureTask) ask(ctx context.Context, requests map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	f := t.f
	f.mu.Lock()
	t.status, t.inputRequests, t.inputResponses = "input_required", requests, map[string]json.RawMessage{}
	t.answered = make(chan struct{})
	t.updated = time.Now().UTC()
	answered := t.answered
	f.mu.Unlock()
	select {
	case <-answered:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	t.status, t.updated = "working", time.Now().UTC()
	return t.inputResponses, nil
}

// answer takes the responses to pending input requests; the answered
// keys leave inputRequests, and the task resumes when none is left.
func (t *fixtureTask) answer(responses map[string]json.RawMessage) {
	if t.status != "input_required" {
		return
	}
	for k, v := range responses {
		if _, pending := t.inputRequests[k]; pending {
			t.inputResponses[k] = v
			delete(t.inputRequests, k)
		}
	}
	t.updated = time.Now().UTC()
	if len(t.inputRequests) == 0 {
		close(t.answered)
	}
}

// fixtureTaskTools are the task server's task tools.
func fixtureTaskTools() map[string]taskTool {
	text := func(s string, isError bool) json.RawMessage {
		return mustMarshal(map[string]any{"content": []any{map[string]string{"type": "text", "text": s}}, "isError": isError})
	}
	sleep := func(ctx context.Context, d time.Duration) *RawError {
		select {
		case <-time.After(d):
			return nil
		case <-ctx.Done():
			return &RawError{Code: codeInternalError, Message: "cancelled"}
		}
	}
	asked := func(ctx context.Context, t *fixtureTask, keys ...string) (json.RawMessage, *RawError) {
		if t == nil {
			return nil, &RawError{Code: codeMissingCapability, Message: "this tool asks, as a task only"}
		}
		requests := map[string]json.RawMessage{}
		for _, k := range keys {
			requests[k] = mustMarshal(elicitation("Confirm "+k+"?", "confirm"))
		}
		responses, err := t.ask(ctx, requests)
		if err != nil {
			return nil, &RawError{Code: codeInternalError, Message: err.Error()}
		}
		return text(fmt.Sprintf("answered %d input requests", len(responses)), false), nil
	}
	return map[string]taskTool{
		"slow_compute": {"optional", func(ctx context.Context, _ *fixtureTask, args json.RawMessage) (json.RawMessage, *RawError) {
			var a struct {
				Seconds float64 `json:"seconds"`
				Label   string  `json:"label"`
			}
			_ = json.Unmarshal(args, &a)
			if err := sleep(ctx, time.Duration(a.Seconds*float64(time.Second))); err != nil {
				return nil, err
			}
			return text("computed "+a.Label, false), nil
		}},
		"failing_job": {"required", func(ctx context.Context, _ *fixtureTask, _ json.RawMessage) (json.RawMessage, *RawError) {
			if err := sleep(ctx, time.Second); err != nil {
				return nil, err
			}
			return text("the job failed", true), nil
		}},
		"protocol_error_job": {"required", func(context.Context, *fixtureTask, json.RawMessage) (json.RawMessage, *RawError) {
			return nil, &RawError{Code: codeInternalError, Message: "the job crashed"}
		}},
		"confirm_delete": {"required", func(ctx context.Context, t *fixtureTask, _ json.RawMessage) (json.RawMessage, *RawError) {
			return asked(ctx, t, "confirm")
		}},
		"multi_input": {"required", func(ctx context.Context, t *fixtureTask, _ json.RawMessage) (json.RawMessage, *RawError) {
			return asked(ctx, t, "first", "second")
		}},
		"test_tool_with_task": {"required", func(_ context.Context, _ *fixtureTask, args json.RawMessage) (json.RawMessage, *RawError) {
			var a struct{ Name string }
			_ = json.Unmarshal(args, &a)
			return text("Hello, "+a.Name+"!", false), nil
		}},
	}
}
