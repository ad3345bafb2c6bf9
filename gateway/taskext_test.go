package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// askingTool is a registry tool that asks one question and answers with
// the reply; background says whether it runs as background work (as a
// backend's task tool does). It asks on a context of its own, as a
// backend's question arrives.
func askingTool(name string, background bool) tool.Tool {
	t := goTool(name, func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		askCtx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		answer, err := tool.AskFrom(ctx)(askCtx, tool.Ask{Method: tool.AskElicit, Params: json.RawMessage(`{"message":"which one?","requestedSchema":{"type":"object","properties":{"pick":{"type":"string"}}}}`)})
		if err != nil {
			return tool.Output{}, err
		}
		return tool.Output{Content: []tool.Content{tool.Text("answer " + string(answer))}}, nil
	})
	t.Background = background
	return t
}

// A 2026-07-28 client through the stateless gateway (the bridge's own
// client, which declares the tasks extension): a task tool's call becomes
// a task of the gateway's, whose question reaches the client as an
// inputRequest and is answered with tasks/update, so the tool gets the
// client's answer; a plain call's question reaches it as an
// input-required result (gateway/questions.go). Another identity naming
// the task gets what a made-up id gets.
func TestGatewayStatelessExtensionTasks(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(askingTool("ask", true), askingTool("plain", false)); err != nil {
		t.Fatal(err)
	}
	opts := Options{Stateless: true, Authenticate: aliceOrBob}
	base := serveHTTP(t, newGateway(t, reg, opts), opts)

	creg := tool.NewRegistry()
	c := startClient(t, mcpclient.Config{ServerName: "gw", Transport: mcpclient.TransportStreamableHTTP, URL: base + "/mcp",
		Headers: map[string]string{"Authorization": "Bearer alice-secret"}}, mcpclient.Options{Registry: creg, Elicit: true})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if v := c.Status().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("client negotiated %q", v)
	}
	answer := tool.WithAsk(ctx, func(context.Context, tool.Ask) (json.RawMessage, error) {
		return json.RawMessage(`{"action":"accept","content":{"pick":"snake"}}`), nil
	})
	for name, want := range map[string]string{"ask": `"pick":"snake"`, "plain": `"pick":"snake"`} {
		res, err := creg.Execute(answer, "mcp__gw__"+name, json.RawMessage(`{}`))
		if err != nil || res.IsError || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, want) {
			t.Errorf("%s: %+v, %v; want %s", name, res, err, want)
		}
	}

	call := `{"name":"ask","arguments":{},"_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}`
	alice := &rawHTTP{t: t, endpoint: base + "/mcp", token: "alice-secret"}
	created := alice.request("tools/call", call)
	var task struct {
		ResultType string `json:"resultType"`
		TaskID     string `json:"taskId"`
	}
	if err := json.Unmarshal(created.Result, &task); err != nil || task.ResultType != "task" || task.TaskID == "" {
		t.Fatalf("created: %s %+v", created.Result, created.Error)
	}
	waitFor(t, "alice's task asking", func() bool {
		return strings.Contains(string(alice.request("tasks/get", idParams(task.TaskID)).Result), `"inputRequests":{"q1":`)
	})
	bob := &rawHTTP{t: t, endpoint: base + "/mcp", token: "bob-secret"}
	answeredAsUnknown(t, "bob", bob, task.TaskID, "tasks/get", "tasks/update", "tasks/cancel")
	alice.request("tasks/update", `{"taskId":"`+task.TaskID+`","inputResponses":{"q1":{"action":"accept","content":{"pick":"owl"}}},`+declaresTasks+`}`)
	waitFor(t, "alice's task completed", func() bool {
		return strings.Contains(string(alice.request("tasks/get", idParams(task.TaskID)).Result), `"status":"completed"`)
	})
	if got := alice.request("tasks/get", idParams(task.TaskID)); !strings.Contains(string(got.Result), `\"pick\":\"owl\"`) {
		t.Errorf("alice's result: %s", got.Result)
	}
}

// meta2026 is the _meta of a 2026-07-28 request from a client that
// declares the tasks extension.
const meta2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},` +
	`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// On a stdio connection at 2026-07-28 (server/discover, then requests
// that carry the client's capabilities), the gateway declares the
// extension, a task tool's call from a client that declares it becomes a
// task, its question an inputRequest answered with tasks/update, and its
// result comes inline in tasks/get; another connection's tasks/get of it
// gets what a made-up id gets.
func TestGatewayStdioExtensionTasks(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(askingTool("ask", true)); err != nil {
		t.Fatal(err)
	}
	g := newGateway(t, reg, Options{})
	c := connectRawInit(t, "", g.ServeStdio)
	if d := c.request("server/discover", `{`+meta2026+`}`); !strings.Contains(string(d.Result), `"extensions":{"io.modelcontextprotocol/tasks":{}}`) {
		t.Errorf("server/discover declares no tasks extension: %s %+v", d.Result, d.Error)
	}
	waitFor(t, "the tool served", func() bool {
		return strings.Contains(string(c.request("tools/list", `{`+meta2026+`}`).Result), `"ask"`)
	})
	created := c.request("tools/call", `{"name":"ask","arguments":{},`+meta2026+`}`)
	var task struct {
		ResultType string `json:"resultType"`
		TaskID     string `json:"taskId"`
	}
	if err := json.Unmarshal(created.Result, &task); err != nil || task.ResultType != "task" || task.TaskID == "" {
		t.Fatalf("created: %s %+v", created.Result, created.Error)
	}
	waitFor(t, "the task asking", func() bool {
		return strings.Contains(string(c.request("tasks/get", idParams(task.TaskID)).Result), `"inputRequests":{"q1":{"method":"elicitation/create"`)
	})
	other := connectRawInit(t, "", g.ServeStdio)
	answeredAsUnknown(t, "another connection", other, task.TaskID, "tasks/get")
	c.request("tasks/update", `{"taskId":"`+task.TaskID+`","inputResponses":{"q1":{"action":"accept","content":{"pick":"wren"}}}}`)
	waitFor(t, "the task completed", func() bool {
		got := c.request("tasks/get", idParams(task.TaskID))
		return strings.Contains(string(got.Result), `"status":"completed"`) && strings.Contains(string(got.Result), `\"pick\":\"wren\"`)
	})
}

// A task's call from a client asked through input-required results (a
// 2026-07-28 stdio client that offers elicitation) does not park: its
// backend's round of questions becomes the task's inputRequests, under
// the backend's keys, and the task ends with the call, which gives its
// slot back and ends its admission once, ok. It used to run parked: the
// round ended the task's body with an empty result, which every tasks/get
// failed to encode (-32603), while the call held its slot and admission
// until the question wait expired.
func TestStdioExtensionTaskRoundAskedInTask(t *testing.T) {
	reg := tool.NewRegistry()
	round := goTool("round", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		got, err := tool.InputsFrom(ctx)(ctx, map[string]tool.Ask{"pick": {Method: tool.AskElicit,
			Params: json.RawMessage(`{"message":"which one?","requestedSchema":{"type":"object","properties":{"pick":{"type":"string"}}}}`)}})
		if err != nil {
			return tool.Output{}, err
		}
		return tool.Output{Content: []tool.Content{tool.Text("answer " + string(got["pick"]))}}, nil
	})
	round.Background = true
	if _, err := reg.Register(round); err != nil {
		t.Fatal(err)
	}
	gate := newCountingGate()
	g := newGateway(t, reg, Options{Gate: gate})
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	c := connectRawInit(t, "", g.ServeStdio)
	c.request("server/discover", `{`+meta+`}`)
	waitFor(t, "the tool served", func() bool {
		return strings.Contains(string(c.request("tools/list", `{`+meta+`}`).Result), `"round"`)
	})
	id := createdTask(t, c.request("tools/call", `{"name":"round","arguments":{},`+meta+`}`), true)
	get := func() wireMessage { return c.request("tasks/get", `{"taskId":"`+id+`",`+meta+`}`) }
	waitFor(t, "the task asking", func() bool {
		got := get()
		if got.Error != nil {
			t.Fatalf("tasks/get: %+v", got.Error)
		}
		return strings.Contains(string(got.Result), `"inputRequests":{"pick":{"method":"elicitation/create"`)
	})
	c.request("tasks/update", `{"taskId":"`+id+`","inputResponses":{"pick":{"action":"accept","content":{"pick":"wren"}}},`+meta+`}`)
	waitFor(t, "the task completed", func() bool {
		got := get()
		return strings.Contains(string(got.Result), `"status":"completed"`) && strings.Contains(string(got.Result), `\"pick\":\"wren\"`)
	})
	waitFor(t, "the call's slot given back", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.inFlight == 0 && g.slotsTaken() == 0
	})
	gate.expect(t, "round", counts{Entered: 1, Ended: okOutcome})
}

// A call again with answers goes on with the call parked under its
// requestState, whatever the request declares: a client that began a
// task tool's call without the tasks extension and brings the answers
// declaring it gets the call's result, the call admitted once. The
// answers were dropped: the retry was admitted again as a new task (a
// second Gate entry and call slot) while the parked call held its own
// until the question wait expired.
func TestExtensionRetryGoesOnWithParkedCall(t *testing.T) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(askingTool("ask", true)); err != nil {
		t.Fatal(err)
	}
	gate := newCountingGate()
	opts := Options{Stateless: true, Gate: gate}
	g := newGateway(t, reg, opts)
	c := &rawHTTP{t: t, endpoint: serveHTTP(t, g, opts) + "/mcp", perRequest: true}
	const client = `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"}`
	first := c.request("tools/call", `{"name":"ask","arguments":{},"_meta":{`+client+`,"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}`)
	var asked struct {
		ResultType, RequestState string
	}
	if err := json.Unmarshal(first.Result, &asked); err != nil || asked.ResultType != "input_required" || asked.RequestState == "" {
		t.Fatalf("first round: %s %+v; want input_required", first.Result, first.Error)
	}
	again := c.request("tools/call", `{"name":"ask","arguments":{},"requestState":"`+asked.RequestState+`","inputResponses":{"q1":{"action":"accept","content":{"pick":"owl"}}},`+
		`"_meta":{`+client+`,"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}}`)
	if again.Error != nil || !strings.Contains(string(again.Result), `"resultType":"complete"`) || !strings.Contains(string(again.Result), `\"pick\":\"owl\"`) {
		t.Errorf("call again with the answers: %s %+v; want the call's result", again.Result, again.Error)
	}
	waitFor(t, "the call's slot given back", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.inFlight == 0 && g.slotsTaken() == 0
	})
	gate.expect(t, "ask", counts{Entered: 1, Ended: okOutcome})
}

// In stateless mode, the bound on identities holding tasks counts those
// that hold some now: once maxTaskOwners identities had each made a task
// and collected it, no other identity got a task again until the
// gateway restarted ("too many identities hold tasks").
func TestGatewayStatelessTaskOwnersForgotten(t *testing.T) {
	reg := jobRegistry(t)
	opts := Options{Stateless: true, Authenticate: func(r *http.Request) (string, error) {
		if id, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			return id, nil
		}
		return "", errors.New("no credential")
	}}
	base := serveHTTP(t, newGateway(t, reg, opts), opts)
	call := `{"name":"job","arguments":{},` + meta2026 + `}`
	taskOf := func(c *rawHTTP) (string, wireMessage) {
		m := c.request("tools/call", call)
		var task struct {
			ResultType string `json:"resultType"`
			TaskID     string `json:"taskId"`
		}
		if json.Unmarshal(m.Result, &task) != nil || task.ResultType != "task" {
			return "", m
		}
		return task.TaskID, m
	}
	first := &rawHTTP{t: t, endpoint: base + "/mcp", token: "user-0", perRequest: true}
	waitFor(t, "the task tool served", func() bool {
		id, _ := taskOf(first)
		return id != "" && first.request("tasks/cancel", idParams(id)).Error == nil
	})
	for i := 1; i < maxTaskOwners; i++ {
		c := &rawHTTP{t: t, endpoint: base + "/mcp", token: "user-" + strconv.Itoa(i), perRequest: true}
		id, m := taskOf(c)
		if id == "" {
			t.Fatalf("identity %d: no task: %s %+v", i, m.Result, m.Error)
		}
		if got := c.request("tasks/cancel", idParams(id)); got.Error != nil {
			t.Fatalf("identity %d: tasks/cancel: %+v", i, got.Error)
		}
	}
	late := &rawHTTP{t: t, endpoint: base + "/mcp", token: "late", perRequest: true}
	if id, m := taskOf(late); id == "" {
		t.Fatalf("an identity after %d whose tasks are all collected: %s %+v", maxTaskOwners, m.Result, m.Error)
	}
}

// The wire of the tasks extension as a 2026-07-28 client meets it: the
// methods the extension removed (tasks/list, the blocking tasks/result)
// are not found (-32601), as on a backend that speaks it, on every path
// of the extension; a stateless request of tasks/get, tasks/update or
// tasks/cancel from a client that did not declare the extension gets
// -32021, with HTTP 400 and the capability it lacks in the error's data,
// even for its own task; declared, the same request is answered.
func TestExtensionTasksWire(t *testing.T) {
	for _, p := range taskPaths {
		if !p.ext {
			continue
		}
		t.Run(p.name, func(t *testing.T) {
			c := p.open(t, Options{})
			id := createdTask(t, c.request("tools/call", p.call("work")), true)
			awaitTask(t, c, id, "completed")
			for _, method := range []string{"tasks/list", "tasks/result"} {
				refusedWith(t, method, inBody(c.request(method, idParams(id))), -32601)
			}
		})
	}
	opts := Options{Stateless: true, Authenticate: aliceOrBob}
	base := serveHTTP(t, newGateway(t, admissionRegistry(t), opts), opts)
	alice := &rawHTTP{t: t, endpoint: base + "/mcp", token: "alice-secret", perRequest: true}
	id := createdTask(t, alice.request("tools/call", extParams("work")), true)
	awaitTask(t, alice, id, "completed")
	bare := `{"taskId":"` + id + `"}`
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		m, resp := alice.postWith(`{"jsonrpc":"2.0","id":9,"method":"`+method+`","params":`+bare+`}`, alice.headersOf(method, bare))
		refusedWith(t, method+" of a client that did not declare the extension", inBody(m), -32021)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(m.Error.Message, `"data":{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`) {
			t.Errorf("%s undeclared: HTTP %d, error %+v; want 400 naming the capability", method, resp.StatusCode, m.Error)
		}
	}
	if got := alice.request("tasks/get", idParams(id)); got.Error != nil || !strings.Contains(string(got.Result), `"status":"completed"`) {
		t.Errorf("tasks/get declared: %s %+v", got.Result, got.Error)
	}
}

// inBody returns the JSON-RPC response an HTTP error status carried in
// its body (rawHTTP reports it as an error of that status), else m.
func inBody(m wireMessage) wireMessage {
	var in wireMessage
	if m.Error != nil && m.Error.Code >= 400 && m.Error.Code < 600 && json.Unmarshal([]byte(m.Error.Message), &in) == nil {
		return in
	}
	return m
}

// A stateless task call is decided at its take and built again when it
// runs; a tool that stopped being a task tool in between (its backend's
// list changed) gets an error to retry on. The second build used to
// return nil, which was called: a panic on a goroutine nothing recovers,
// the gateway's process gone.
func TestStatelessTaskToolGoneBeforeItRuns(t *testing.T) {
	reg := jobRegistry(t)
	g := newGateway(t, reg, Options{Stateless: true})
	waitFor(t, "the task tool published", func() bool { return (*g.taskTools.Load())["job"] })
	id, _ := jsonrpc.MakeID(float64(1))
	req := &jsonrpc.Request{ID: id, Method: "tools/call", Params: json.RawMessage(`{"name":"job","arguments":{},` + meta2026 + `}`)}
	body := g.statelessTaskBody(req)
	if body == nil {
		t.Fatal("a task call of a task tool is not taken")
	}
	g.taskTools.Store(&map[string]bool{})
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panicked: %v", p)
			}
		}()
		_, err = body(t.Context())
	}()
	if err != errTaskToolGone {
		t.Errorf("the body of a call whose tool stopped being a task tool: %v, want %v", err, errTaskToolGone)
	}
}

// In stateless mode without a task store, an identity whose tasks all
// ended taskKeep ago is forgotten with them at the next renewal tick,
// whether or not it comes back: its results are not kept past their ttl.
// They used to be forgotten only when the identity made another request,
// or once maxTaskOwners identities held tasks.
func TestStatelessEndedTasksForgottenUnasked(t *testing.T) {
	was := taskKeep
	taskKeep = time.Millisecond
	t.Cleanup(func() { taskKeep = was })
	reg := jobRegistry(t)
	opts := Options{Stateless: true, Authenticate: func(r *http.Request) (string, error) {
		return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), nil
	}}
	g := newGateway(t, reg, opts)
	base := serveHTTP(t, g, opts)
	c := &rawHTTP{t: t, endpoint: base + "/mcp", token: "alice", perRequest: true}
	var id string
	waitFor(t, "a task made", func() bool {
		var task struct {
			TaskID string `json:"taskId"`
		}
		json.Unmarshal(c.request("tools/call", `{"name":"job","arguments":{},`+meta2026+`}`).Result, &task)
		id = task.TaskID
		return id != ""
	})
	waitFor(t, "the task ended", func() bool {
		st := g.ownerTasks("alice")
		return st != nil && st.store.Held() == 0 || st == nil
	})
	g.renewAll()
	if st := g.ownerTasks("alice"); st != nil {
		t.Errorf("an identity whose task ended past taskKeep is still kept (task %s held: %v)", id, st.store.Holds(id))
	}
}

// On the stateful endpoint, a tasks-extension call on a session that was
// never initialized (no Mcp-Session-Id, no 2026-07-28 _meta) is the
// SDK's to refuse: it enters no Gate (no audit line, no rate token) and
// runs nothing. It used to be admitted, then abandoned with "the client
// session is closing".
func TestExtensionCallBeforeInitializeNotAdmitted(t *testing.T) {
	reg := jobRegistry(t)
	gate := newCountingGate()
	g := newGateway(t, reg, Options{Gate: gate})
	waitFor(t, "the task tool published", func() bool { return (*g.taskTools.Load())["job"] })
	base := serveHTTP(t, g, Options{})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"job","arguments":{},` +
		`"_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	gate.mu.Lock()
	defer gate.mu.Unlock()
	if gate.entered["job"] != 0 || strings.Contains(string(got), `"result"`) {
		t.Errorf("a call before initialize: %d %s; Gate entered %d times, want the SDK's refusal and none", resp.StatusCode, got, gate.entered["job"])
	}
}

// jobRegistry is a registry of one tool, job, that runs as a task.
func jobRegistry(t *testing.T) *tool.Registry {
	t.Helper()
	reg := tool.NewRegistry()
	job := goTool("job", textBody("done"))
	job.Background = true
	if _, err := reg.Register(job); err != nil {
		t.Fatal(err)
	}
	return reg
}

// Every tasks request is the Observer's, once, on every path to tasks,
// as every request the SDK serves is: those the gateway answers beneath
// the SDK (a session's tasks, and the extension's, stateless or on a
// 2026-07-28 stdio connection), answered or refused. A method the path
// does not have (2025-11-25's tasks/update; tasks/list and tasks/result,
// which the extension removed) is not found and not counted, as the
// SDK's unknown methods are not.
func TestTaskRequestsObserved(t *testing.T) {
	for _, p := range taskPaths {
		t.Run(p.name, func(t *testing.T) {
			obs := &observed{}
			c := p.open(t, Options{Observer: obs})
			id := createdTask(t, c.request("tools/call", p.call("work")), p.ext)
			awaitTask(t, c, id, "completed")
			notFound := map[bool][]string{false: {"tasks/update"}, true: {"tasks/list", "tasks/result"}}[p.ext]
			for _, method := range []string{"tasks/get", "tasks/result", "tasks/list", "tasks/update", "tasks/cancel"} {
				obs.mu.Lock()
				before := countOf(obs.requests, method)
				obs.mu.Unlock()
				got := inBody(c.request(method, idParams(id)))
				obs.mu.Lock()
				heard := slices.Clone(obs.requests)
				obs.mu.Unlock()
				want := 1
				if slices.Contains(notFound, method) {
					refusedWith(t, method, got, -32601)
					want = 0
				} else if got.Error != nil && got.Error.Code == -32601 {
					t.Errorf("%s: not found (%s)", method, got.Error.Message)
				}
				if n := countOf(heard, method) - before; n != want {
					t.Errorf("one %s: the Observer heard of it %d times, want %d (it heard %v)", method, n, want, heard)
				}
			}
		})
	}
}
