package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/tool"
)

// taskOf returns the id of the task a tools/call as a task created.
func taskOf(t *testing.T, m wireMessage) string {
	t.Helper()
	var r struct {
		Task struct {
			TaskID string `json:"taskId"`
			Status string `json:"status"`
		} `json:"task"`
	}
	if m.Error != nil || json.Unmarshal(m.Result, &r) != nil || r.Task.TaskID == "" || r.Task.Status != "working" {
		t.Fatalf("no task created: result %s, error %+v", m.Result, m.Error)
	}
	return r.Task.TaskID
}

func idParams(id string) string { return `{"taskId":"` + id + `",` + declaresTasks + `}` }

// declaresTasks is the _meta of a request from a client that declares the
// tasks extension, which a tasks request of the extension must carry (on
// a 2025-11-25 session the _meta is ignored).
const declaresTasks = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// requester is a raw client of any transport.
type requester interface {
	request(method, params string) wireMessage
}

// answeredAsUnknown fails t unless who's request of each method naming
// id (another's task) is answered as one naming a made-up id is: the
// same error, and nothing else.
func answeredAsUnknown(t *testing.T, who string, c requester, id string, methods ...string) {
	t.Helper()
	const madeUp = "0123456789abcdef0123456789abcdef"
	for _, method := range methods {
		m, want := c.request(method, idParams(id)), c.request(method, idParams(madeUp))
		if m.Error == nil || want.Error == nil || len(m.Result) > 0 || m.Error.Code != want.Error.Code ||
			strings.ReplaceAll(m.Error.Message, id, madeUp) != want.Error.Message {
			t.Errorf("%s's %s %s: result %s, error %+v; a made-up id: %+v", who, method, id, m.Result, m.Error, want.Error)
		}
	}
}

// The gateway passes tasks through: a call as a task gets a task of the
// gateway's, whose id is not the backend's, and which only its session
// can read. The backend's task id never reaches a client, and a second
// session that guesses or replays either id (tasks/get, tasks/result,
// tasks/cancel) gets exactly what a made-up id gets, lists no task, and
// cannot cancel the first session's.
func TestGatewayTasksStayWithTheirCall(t *testing.T) {
	const secret = "backend-task-7f3a"
	script := mcppeer.RawScript{
		Pages:   []mcppeer.RawPage{{Tools: []json.RawMessage{mcppeer.RawTool("report", "")}}},
		Results: map[string]json.RawMessage{"report": json.RawMessage(`{"resultType":"task","taskId":"` + secret + `","status":"completed","result":{"content":[{"type":"text","text":"the report"}]}}`)},
	}
	reg := tool.NewRegistry()
	startRawBackend(t, reg, "tk", script)
	g := newGateway(t, reg, Options{})
	a, b := connectRaw(t, g), connectRaw(t, g)
	waitFor(t, "the backend's tool served", func() bool {
		m := a.request("tools/list", `{}`)
		return strings.Contains(string(m.Result), "mcp__tk__report")
	})
	got := a.request("tools/call", `{"name":"mcp__tk__report","arguments":{}}`)
	if !strings.Contains(string(got.Result), "the report") || strings.Contains(string(got.Result), secret) {
		t.Fatalf("session A's call: %s", got.Result)
	}

	created := a.request("tools/call", `{"name":"mcp__tk__report","arguments":{},"task":{"ttl":60000}}`)
	id := taskOf(t, created)
	if strings.Contains(string(created.Result), secret) {
		t.Fatalf("the backend's task id reached the client: %s", created.Result)
	}
	waitFor(t, "session A's task completed", func() bool {
		return strings.Contains(string(a.request("tasks/get", idParams(id)).Result), `"status":"completed"`)
	})
	if list := a.request("tasks/list", `{}`); !strings.Contains(string(list.Result), id) {
		t.Errorf("session A's tasks/list: %s", list.Result)
	}

	const madeUp = "0123456789abcdef0123456789abcdef"
	for _, guess := range []string{id, secret} {
		for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
			m := b.request(method, idParams(guess))
			want := b.request(method, idParams(madeUp))
			if m.Error == nil || len(m.Result) > 0 || want.Error == nil {
				t.Fatalf("session B's %s %s: result %s, error %+v", method, guess, m.Result, m.Error)
			}
			if m.Error.Code != want.Error.Code || strings.ReplaceAll(m.Error.Message, guess, madeUp) != want.Error.Message || strings.Contains(m.Error.Message, "report") {
				t.Errorf("session B's %s %s answered %+v, a made-up id %+v", method, guess, m.Error, want.Error)
			}
		}
	}
	if list := b.request("tasks/list", `{}`); list.Error != nil || string(list.Result) != `{"tasks":[]}` {
		t.Errorf("session B's tasks/list: result %s, error %+v", list.Result, list.Error)
	}

	res := a.request("tasks/result", idParams(id))
	if !strings.Contains(string(res.Result), "the report") || strings.Contains(string(res.Result), secret) ||
		!strings.Contains(string(res.Result), `"io.modelcontextprotocol/related-task":{"taskId":"`+id+`"}`) {
		t.Errorf("session A's tasks/result after B's attempts: result %s, error %+v", res.Result, res.Error)
	}
	if again := a.request("tasks/result", idParams(id)); again.Error == nil {
		t.Errorf("a collected task's result was served again: %s", again.Result)
	}
}

// A task's question reaches the client that called: the task is
// input_required while it waits, the question names the task, and the
// answer reaches the tool.
func TestGatewayTaskAsksItsClient(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(goTool("ask", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		answer, err := tool.AskFrom(ctx)(ctx, tool.Ask{Method: tool.AskElicit, Params: json.RawMessage(`{"message":"which one?","requestedSchema":{"type":"object","properties":{"pick":{"type":"string"}}}}`)})
		if err != nil {
			return tool.Output{}, err
		}
		return tool.Output{Content: []tool.Content{tool.Text("answer " + string(answer))}}, nil
	})); err != nil {
		t.Fatal(err)
	}
	g := newGateway(t, reg, Options{})
	c := connectRawInit(t, `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}`, g.ServeStdio)
	id := taskOf(t, c.request("tools/call", `{"name":"ask","arguments":{},"task":{}}`))
	q := c.serverRequest("elicitation/create")
	if !strings.Contains(string(q.Params), `"io.modelcontextprotocol/related-task":{"taskId":"`+id+`"}`) || !strings.Contains(string(q.Params), "which one?") {
		t.Errorf("the question: %s", q.Params)
	}
	if st := c.request("tasks/get", idParams(id)); !strings.Contains(string(st.Result), `"status":"input_required"`) {
		t.Errorf("tasks/get while asking: %s %+v", st.Result, st.Error)
	}
	c.send(`{"jsonrpc":"2.0","id":` + string(q.ID) + `,"result":{"action":"accept","content":{"pick":"snake"}}}`)
	res := c.request("tasks/result", idParams(id))
	if !strings.Contains(string(res.Result), `snake`) {
		t.Errorf("tasks/result: %s %+v", res.Result, res.Error)
	}
}

// A session holds at most maxSessionTasks tasks; the next is refused with
// a clear error, and the session's end cancels those still running.
func TestGatewayTasksBoundedAndEndWithTheirSession(t *testing.T) {
	reg := tool.NewRegistry()
	started := make(chan struct{}, maxSessionTasks)
	ended := make(chan struct{}, maxSessionTasks)
	if _, err := reg.Register(goTool("hold", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		started <- struct{}{}
		<-ctx.Done()
		ended <- struct{}{}
		return tool.Output{}, ctx.Err()
	})); err != nil {
		t.Fatal(err)
	}
	g := newGateway(t, reg, Options{})
	c := connectRaw(t, g)
	for range maxSessionTasks {
		taskOf(t, c.request("tools/call", `{"name":"hold","arguments":{},"task":{}}`))
	}
	for i := range maxSessionTasks {
		waitSignal(t, started, fmt.Sprintf("task %d running", i))
	}
	over := c.request("tools/call", `{"name":"hold","arguments":{},"task":{}}`)
	if over.Error == nil || !strings.Contains(over.Error.Message, fmt.Sprintf("too many tasks in flight (at most %d)", maxSessionTasks)) {
		t.Errorf("task %d: result %s, error %+v", maxSessionTasks+1, over.Result, over.Error)
	}
	if list := c.request("tasks/list", `{}`); strings.Count(string(list.Result), `"taskId"`) != maxSessionTasks {
		t.Errorf("tasks/list: %s", list.Result)
	}
	c.w.Close() // the client leaves
	for i := range maxSessionTasks {
		waitSignal(t, ended, fmt.Sprintf("task %d cancelled", i))
	}
}

// On a session where the gateway offers tasks, a tool its backend runs as
// a task (execution.taskSupport "required" or "optional") is listed as
// supporting tasks, "optional" since a plain call still gets its result;
// other tools, and every tool on a 2026-07-28 session (server/discover,
// then requests that carry the client's _meta), list none. A client whose
// initialize asks for 2026-07-28 is answered 2025-11-25, and listed so.
func TestGatewayListsTaskSupport(t *testing.T) {
	withExecution := func(name, support string) json.RawMessage {
		return json.RawMessage(`{"name":"` + name + `","inputSchema":{"type":"object"},"execution":{"taskSupport":"` + support + `"}}`)
	}
	script := mcppeer.RawScript{Pages: []mcppeer.RawPage{{Tools: []json.RawMessage{
		withExecution("must", "required"), withExecution("may", "optional"), withExecution("never", "forbidden"), mcppeer.RawTool("plain", ""),
	}}}}
	reg := tool.NewRegistry()
	startRawBackend(t, reg, "tk", script)
	g := newGateway(t, reg, Options{})
	// listed lists c's tools, each request's params carrying meta (a
	// 2026-07-28 client's _meta) when one is given.
	listed := func(c *rawClient, meta ...string) map[string]string {
		var res struct {
			Tools []struct {
				Name      string          `json:"name"`
				Execution json.RawMessage `json:"execution"`
			} `json:"tools"`
		}
		m := c.request("tools/list", `{`+strings.Join(meta, "")+`}`)
		if err := json.Unmarshal(m.Result, &res); err != nil {
			t.Fatalf("tools/list: %s %+v", m.Result, m.Error)
		}
		out := map[string]string{}
		for _, tl := range res.Tools {
			out[tl.Name] = string(tl.Execution)
		}
		return out
	}
	const optional = `{"taskSupport":"optional"}`
	want := map[string]string{"mcp__tk__must": optional, "mcp__tk__may": optional, "mcp__tk__never": "", "mcp__tk__plain": ""}
	c := connectRaw(t, g)
	waitFor(t, "the backend's tools listed", func() bool { return len(listed(c)) == 4 })
	if diff := cmp.Diff(want, listed(c)); diff != "" {
		t.Errorf("2025-11-25 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, listed(connectRawAt(t, g, "2026-07-28"))); diff != "" {
		t.Errorf("initialize asking 2026-07-28 (-want +got):\n%s", diff)
	}
	none := map[string]string{"mcp__tk__must": "", "mcp__tk__may": "", "mcp__tk__never": "", "mcp__tk__plain": ""}
	for _, meta := range []string{metaNoTasks, meta2026} {
		c := connectRawInit(t, "", g.ServeStdio)
		if d := c.request("server/discover", `{`+meta+`}`); d.Error != nil {
			t.Fatalf("server/discover: %+v", d.Error)
		}
		if diff := cmp.Diff(none, listed(c, meta)); diff != "" {
			t.Errorf("2026-07-28, %s (-want +got):\n%s", meta, diff)
		}
	}
}

// taskCall tells a call as a task, in every shape the tests make one,
// from a plain call, even one whose arguments or _meta hold a "task", and
// keeps the call's own members without the task's.
func TestTaskCallTellsTaskFromPlain(t *testing.T) {
	for _, tc := range []struct {
		params string
		task   bool
	}{
		{`{"name":"job","arguments":{},"task":{}}`, true},
		{`{"name":"job","arguments":{},"task":{"ttl":60000}}`, true},
		{`{"name":"plain","task":{}}`, true},
		{`{"task":{},"name":"job","arguments":{}}`, true},
		{`{"name":"job","arguments":{},"_meta":{"progressToken":"p1"},"task":{}}`, true},
		{` { "name" : "job" , "task" : { } } `, true},
		{`{"name":"job","arguments":{}}`, false},
		{`{"name":"job","arguments":{},"task":null}`, false},
		{`{"name":"job","arguments":{"task":{}}}`, false},
		{`{"name":"job","arguments":{},"_meta":{"task":{}}}`, false},
		{`{"name":"task","arguments":{"label":"task"}}`, false},
	} {
		p, ok := taskCall(json.RawMessage(tc.params))
		if ok != tc.task {
			t.Errorf("taskCall(%s) reports %v; want %v", tc.params, ok, tc.task)
			continue
		}
		if ok && (p.Name == "" || strings.Contains(string(p.Arguments), "task")) {
			t.Errorf("taskCall(%s) reads %+v; want the call without its task", tc.params, p)
		}
	}
}

// A call runs as a task when its params have a member named "task"
// exactly, as the SDK's decoder reads names: spelled with an escape it
// gets a task; in another case ("TASK") it is a member the protocol does
// not know, and the call answers plainly.
func TestTaskMemberReadAsTheSDKReadsIt(t *testing.T) {
	script := mcppeer.RawScript{
		Pages:   []mcppeer.RawPage{{Tools: []json.RawMessage{mcppeer.RawTool("report", "")}}},
		Results: map[string]json.RawMessage{"report": json.RawMessage(`{"content":[{"type":"text","text":"the report"}]}`)},
	}
	reg := tool.NewRegistry()
	startRawBackend(t, reg, "tk", script)
	c := connectRaw(t, newGateway(t, reg, Options{}))
	waitFor(t, "the backend's tool served", func() bool {
		return strings.Contains(string(c.request("tools/list", `{}`).Result), "mcp__tk__report")
	})
	taskOf(t, c.request("tools/call", `{"name":"mcp__tk__report","arguments":{},"t\u0061sk":{"ttl":60000}}`))
	for _, params := range []string{
		`{"name":"mcp__tk__report","arguments":{},"TASK":{"ttl":60000}}`,
		`{"name":"mcp__tk__report","arguments":{},"Task":{}}`,
	} {
		if m := c.request("tools/call", params); m.Error != nil || !strings.Contains(string(m.Result), "the report") || strings.Contains(string(m.Result), "taskId") {
			t.Errorf("%s: result %s, error %+v; want the plain result", params, m.Result, m.Error)
		}
	}
}
