package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/tool"
)

// taskPeer is a go-sdk server with tasks beneath it (the SDK has none):
// tools/list, tools/call and tasks/* are answered on its connection. "opt"
// (taskSupport optional) runs at once, or as a task that reports working
// once and then completes; "slow" (required) works forever.
type taskPeer struct {
	mu        sync.Mutex
	created   []string // tools called as tasks
	gets      int
	cancelled []string
	status    string // what tasks/get answers for slow; "" = working
	seenExt   bool   // a request declared the tasks extension
	asks      string // the question the task of tool "asks" puts (an input request)
	responses string // the inputResponses of tasks/update
}

func (p *taskPeer) take(req *jsonrpc.Request) sdkwire.TakenCall {
	answer := func(v string) sdkwire.TakenCall {
		return func(context.Context) (json.RawMessage, error) { return json.RawMessage(v), nil }
	}
	var params struct {
		Name   string          `json:"name"`
		Task   json.RawMessage `json:"task"`
		TaskID string          `json:"taskId"`
	}
	_ = json.Unmarshal(req.Params, &params)
	p.mu.Lock()
	defer p.mu.Unlock()
	if strings.Contains(string(req.Params), `"io.modelcontextprotocol/tasks":{}`) {
		p.seenExt = true
	}
	if r := p.extension(req.Method, params.Name, params.TaskID, req.Params); r != "" {
		return answer(r)
	}
	switch req.Method {
	case "tools/list":
		return answer(`{"tools":[{"name":"opt","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}},` +
			`{"name":"slow","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}]}`)
	case "tools/call":
		if params.Task == nil {
			return answer(`{"content":[{"type":"text","text":"ran at once"}]}`)
		}
		p.created = append(p.created, params.Name)
		return answer(taskJSON(params.Name, "working", "started"))
	case "tasks/get":
		p.gets++
		if params.TaskID == "opt" {
			return answer(taskJSON("opt", []string{"working", "completed"}[min(p.gets-1, 1)], "half way"))
		}
		return answer(taskJSON("slow", cmpOr(p.status, "working"), "still"))
	case "tasks/result":
		return answer(`{"content":[{"type":"text","text":"done as a task"}]}`)
	case "tasks/cancel":
		p.cancelled = append(p.cancelled, params.TaskID)
		return answer(taskJSON(params.TaskID, "cancelled", ""))
	}
	return nil
}

// extension answers as a server of the 2026-07-28 tasks extension for
// the tool "ext": its call becomes a task (resultType "task"), which asks
// one question (inputRequests) and then completes with its result inline.
func (p *taskPeer) extension(method, name, id string, params json.RawMessage) string {
	switch {
	case method == "tools/list":
		return `{"tools":[{"name":"ext","inputSchema":{"type":"object"}},{"name":"crash","inputSchema":{"type":"object"}},{"name":"odd","inputSchema":{"type":"object"}},{"name":"asks","inputSchema":{"type":"object"}},{"name":"opt","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}},` +
			`{"name":"slow","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}]}`
	case method == "tools/call" && (name == "ext" || name == "crash" || name == "asks"):
		return `{"resultType":"task","taskId":"` + name + `","status":"working","pollIntervalMs":1,"ttlMs":1000}`
	case method == "tools/call" && name == "odd":
		return `{"resultType":"task","taskId":"odd","status":"working","pollIntervalMs":1,"ttlMs":1000}`
	case method == "tasks/get" && id == "odd":
		return `{"taskId":"odd","status":"input_required","inputRequests":{"q1":{"method":"elicitation/create","params":5}}}`
	case method == "tasks/get" && id == "asks": // what the test put in p.asks, once answered
		if p.responses != "" {
			return `{"taskId":"asks","status":"completed","result":{"content":[{"type":"text","text":"answered"}]}}`
		}
		return `{"taskId":"asks","status":"input_required","inputRequests":{"q1":` + p.asks + `}}`
	case method == "tasks/update" && id == "asks":
		var u struct{ InputResponses json.RawMessage }
		_ = json.Unmarshal(params, &u)
		p.responses = string(u.InputResponses)
		return `{}`
	case method == "tasks/get" && id == "crash":
		return `{"taskId":"crash","status":"failed","error":{"code":-32050,"message":"boom"}}`
	case method == "tasks/update" && id == "ext":
		var u struct{ InputResponses json.RawMessage }
		_ = json.Unmarshal(params, &u)
		p.responses = string(u.InputResponses)
		return `{}`
	case method == "tasks/get" && id == "ext" && p.responses == "":
		return `{"taskId":"ext","status":"input_required","inputRequests":{"q1":{"method":"elicitation/create","params":{"message":"sure?","requestedSchema":{"type":"object","properties":{}}}}}}`
	case method == "tasks/get" && id == "ext":
		return `{"taskId":"ext","status":"completed","result":{"content":[{"type":"text","text":"ext done"}]}}`
	}
	return ""
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// taskJSON is a task whose id is its tool's name, polled every 1 ms (which
// the client raises to tasks.MinPoll).
func taskJSON(id, status, msg string) string {
	return fmt.Sprintf(`{"task":{"taskId":%q,"status":%q,"statusMessage":%q,"pollInterval":1,"ttl":1000,"createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z"},"taskId":%[1]q,"status":%[2]q,"statusMessage":%[3]q}`, id, status, msg)
}

func (p *taskPeer) transport(t *testing.T) func() (mcp.Transport, error) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "tasks", Version: "0"}, nil)
	return func() (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		take := &sdkwire.TakingTransport{Transport: st, Take: p.take}
		ss, err := srv.Connect(context.Background(), take, nil)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() {
			ss.Close()
			take.Wait()
		})
		return ct, nil
	}
}

func (p *taskPeer) snapshot() (created, cancelled []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.created), slices.Clone(p.cancelled)
}

// An optional task tool runs at once unless the consumer asks for
// background work; then it is a task, followed to its result, and each
// status reaches the progress listener.
func TestTaskOptional(t *testing.T) {
	p := &taskPeer{}
	h := mustStart(t, stdioConfig("tk"), Options{NewTransport: p.transport(t)})
	if got := h.call("mcp__tk__opt", `{}`).Text(); got != "ran at once" {
		t.Fatalf("plain call: %q", got)
	}
	var mu sync.Mutex
	var seen []string
	ctx := tool.WithProgress(tool.WithBackground(context.Background()), func(pr tool.Progress) {
		mu.Lock()
		seen = append(seen, pr.Message)
		mu.Unlock()
	})
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	res, err := h.reg.Execute(ctx, "mcp__tk__opt", json.RawMessage(`{}`))
	if err != nil || res.Text() != "done as a task" {
		t.Fatalf("background call: %q, %v", res.Text(), err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"task working: started", "task working: half way", "task completed: half way"}
	if !slices.Equal(seen, want) {
		t.Errorf("statuses %q, want %q", seen, want)
	}
	if created, _ := p.snapshot(); !slices.Equal(created, []string{"opt"}) {
		t.Errorf("tasks created for %v", created)
	}
}

// A task that outlives toolCallTimeoutMs is cancelled on the server
// (tasks/cancel), and the call says why; so is one whose caller gives up.
func TestTaskCancelled(t *testing.T) {
	p := &taskPeer{}
	cfg := stdioConfig("tk")
	cfg.ToolCallTimeout = 200 * time.Millisecond
	h := mustStart(t, cfg, Options{NewTransport: p.transport(t)})
	got := h.call("mcp__tk__slow", `{}`).Text()
	if !strings.Contains(got, `did not finish the task of tools/call "slow" within toolCallTimeoutMs (200ms); the task was cancelled`) {
		t.Errorf("timed out: %q", got)
	}
	if _, cancelled := p.snapshot(); !slices.Equal(cancelled, []string{"slow"}) {
		t.Errorf("cancelled %v", cancelled)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res, _ := h.reg.Execute(ctx, "mcp__tk__slow", json.RawMessage(`{}`)); !res.IsError {
		t.Errorf("a cancelled call: %q", res.Text())
	}
}

// A server that cancels the task, or answers with a status MCP does not
// define, fails the call with a message saying so.
func TestTaskBadEnds(t *testing.T) {
	for status, want := range map[string]string{
		"cancelled": "task slow was cancelled by the server: still",
		"sleeping":  `task "slow" has the unknown status "sleeping"`,
	} {
		p := &taskPeer{status: status}
		h := mustStart(t, stdioConfig("tk"), Options{NewTransport: p.transport(t)})
		if got := h.call("mcp__tk__slow", `{}`).Text(); !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", status, got, want)
		}
	}
}

// Under the 2026-07-28 tasks extension, which the bridge declares, the
// server makes a task of a plain call: the bridge follows it, answers its
// inputRequests through the call's consumer (tasks/update), and takes the
// result inline.
func TestTaskExtension(t *testing.T) {
	p := &taskPeer{}
	h := mustStart(t, stdioConfig("tk"), Options{NewTransport: p.transport(t)})
	var asked []string
	ctx := tool.WithAsk(context.Background(), func(_ context.Context, a tool.Ask) (json.RawMessage, error) {
		asked = append(asked, a.Method+" "+string(a.Params))
		return json.RawMessage(`{"action":"accept","content":{}}`), nil
	})
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	res, err := h.reg.Execute(ctx, "mcp__tk__ext", json.RawMessage(`{}`))
	if err != nil || res.Text() != "ext done" {
		t.Fatalf("call: %q, %v", res.Text(), err)
	}
	if len(asked) != 1 || !strings.HasPrefix(asked[0], `elicitation/create {"message":"sure?"`) {
		t.Errorf("asked %q", asked)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.responses != `{"q1":{"action":"accept","content":{}}}` || !p.seenExt {
		t.Errorf("inputResponses %s; extension declared: %v", p.responses, p.seenExt)
	}
}

// A server over HTTP tells the consumer the id of the task a background
// call made (tool.WithTaskStarted), and a call with that id
// (tool.WithResume) follows the task to its result without calling the
// tool again. A stdio server's tasks die with its process: their start is
// told without an id, and a resumed call says why it cannot follow one.
func TestTaskResumed(t *testing.T) {
	p := &taskPeer{}
	cfg := Config{ServerName: "tk", Transport: TransportStreamableHTTP, URL: "http://127.0.0.1:1/mcp"}
	h := mustStart(t, cfg, Options{NewTransport: p.transport(t)})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var told []string
	started := tool.WithTaskStarted(tool.WithBackground(ctx), func(id string) { told = append(told, id) })
	if res, err := h.reg.Execute(started, "mcp__tk__opt", json.RawMessage(`{}`)); err != nil || res.Text() != "done as a task" {
		t.Fatalf("background call: %q, %v", res.Text(), err)
	}
	if !slices.Equal(told, []string{"opt"}) {
		t.Fatalf("task ids told: %q, want the task the call made", told)
	}
	res, err := h.reg.Execute(tool.WithResume(ctx, "opt"), "mcp__tk__opt", json.RawMessage(`{}`))
	if err != nil || res.Text() != "done as a task" {
		t.Fatalf("resumed call: %q, %v", res.Text(), err)
	}
	if created, _ := p.snapshot(); !slices.Equal(created, []string{"opt"}) {
		t.Errorf("tasks created: %v, want only the first call's", created)
	}

	stdio := mustStart(t, stdioConfig("tk"), Options{NewTransport: (&taskPeer{}).transport(t)})
	told = nil
	if res, err := stdio.reg.Execute(started, "mcp__tk__opt", json.RawMessage(`{}`)); err != nil || res.Text() != "done as a task" || !slices.Equal(told, []string{""}) {
		t.Errorf("a stdio server's task: %q, %v; ids told %q, want its start told without one", res.Text(), err, told)
	}
	want := `server "tk" runs as a child of this process (stdio): task opt of tools/call "opt", made by another process's child, cannot be followed from here; call the tool again`
	if res, _ := stdio.reg.Execute(tool.WithResume(ctx, "opt"), "mcp__tk__opt", json.RawMessage(`{}`)); !res.IsError || !strings.Contains(res.Text(), want) {
		t.Errorf("a stdio server's task resumed: %q, want %q", res.Text(), want)
	}
}

// A task that fails with a JSON-RPC error fails the call with that
// error, as the server sent it (errors.As finds it: a gateway forwards
// it), not as a tool's error result alone.
func TestTaskExtensionFailed(t *testing.T) {
	p := &taskPeer{}
	h := mustStart(t, stdioConfig("tk"), Options{NewTransport: p.transport(t)})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := h.reg.Execute(ctx, "mcp__tk__crash", json.RawMessage(`{}`))
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "task crash failed: MCP error -32050: boom") {
		t.Fatalf("call: %q, %v", res.Text(), err)
	}
	wire, ok := errors.AsType[*jsonrpc.Error](res.Cause)
	if !ok || wire.Code != -32050 || wire.Message != "boom" {
		t.Errorf("the cause %v carries %+v; want the task's error -32050 \"boom\"", res.Cause, wire)
	}
}

// A consumer that takes rounds (a gateway: tool.InputsFunc) gets a task's
// inputRequests at once, under the server's keys, and the answers go back
// under them.
func TestTaskExtensionRound(t *testing.T) {
	p := &taskPeer{}
	h := mustStart(t, Config{ServerName: "tk", Transport: TransportStdio, Command: "unused"}, Options{Elicit: true, NewTransport: p.transport(t)})
	var rounds []string
	ctx := tool.WithInputs(context.Background(), func(_ context.Context, round map[string]tool.Ask) (map[string]json.RawMessage, error) {
		for key, a := range round {
			rounds = append(rounds, key+" "+a.Method)
		}
		return map[string]json.RawMessage{"q1": json.RawMessage(`{"action":"accept","content":{"ok":true}}`)}, nil
	})
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	res, err := h.reg.Execute(ctx, "mcp__tk__ext", json.RawMessage(`{}`))
	if err != nil || res.Text() != "ext done" {
		t.Fatalf("call: %q, %v", res.Text(), err)
	}
	if !slices.Equal(rounds, []string{"q1 elicitation/create"}) {
		t.Errorf("rounds %q", rounds)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.responses != `{"q1":{"action":"accept","content":{"ok":true}}}` {
		t.Errorf("inputResponses %s", p.responses)
	}
}

// A round the consumer cannot take fails the call, saying why: a request
// that is not one, or one the entry does not let through.
func TestTaskExtensionRoundRefused(t *testing.T) {
	inputs := tool.WithInputs(context.Background(), func(context.Context, map[string]tool.Ask) (map[string]json.RawMessage, error) {
		return nil, errors.New("never asked")
	})
	for name, c := range map[string]struct {
		tool string
		opts Options
		want string
	}{
		"not a request":   {"mcp__tk__odd", Options{Elicit: true}, "reading the task's input requests"},
		"not let through": {"mcp__tk__ext", Options{}, "the bridge's consumer takes no elicitation"},
	} {
		p := &taskPeer{}
		c.opts.NewTransport = p.transport(t)
		h := mustStart(t, stdioConfig("tk"), c.opts)
		ctx, cancel := context.WithTimeout(inputs, 20*time.Second)
		res, _ := h.reg.Execute(ctx, c.tool, json.RawMessage(`{}`))
		cancel()
		if !res.IsError || !strings.Contains(res.Text(), c.want) {
			t.Errorf("%s: %q; want an error saying %q", name, res.Text(), c.want)
		}
	}
}

// A task's questions are let through as the server's own requests are:
// sampling only when the entry allows it (the user's model and key), roots
// answered by the bridge as its entry says, no other method; the consumer
// is never asked what the entry does not let through.
func TestTaskQuestionsLetThroughAsTheEntrySays(t *testing.T) {
	for name, c := range map[string]struct {
		ask, want string
	}{
		"sampling without allowSampling": {`{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}`, "sampling is not allowed"},
		"a method that is none":          {`{"method":"tools/call","params":{}}`, "does not answer"},
	} {
		p := &taskPeer{asks: c.ask}
		var asked atomic.Int32
		h := mustStart(t, stdioConfig("tk"), Options{Sample: true, NewTransport: p.transport(t), Ask: func(context.Context, tool.Ask) (json.RawMessage, error) {
			asked.Add(1)
			return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"secret"},"model":"m","action":"accept","content":{}}`), nil
		}})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		res, _ := h.reg.Execute(ctx, "mcp__tk__asks", json.RawMessage(`{}`))
		cancel()
		if !res.IsError || !strings.Contains(res.Text(), c.want) || asked.Load() != 0 {
			t.Errorf("%s: %q, the consumer asked %d times; want it refused saying %q, and never asked", name, res.Text(), asked.Load(), c.want)
		}
	}
	// Roots are the bridge's to answer: the entry's own, the consumer not asked.
	p := &taskPeer{asks: `{"method":"roots/list","params":{}}`}
	var asked atomic.Int32
	h := mustStart(t, stdioConfig("tk"), Options{NewTransport: p.transport(t), Ask: func(context.Context, tool.Ask) (json.RawMessage, error) {
		asked.Add(1)
		return json.RawMessage(`{"roots":[{"uri":"file:///secret"}]}`), nil
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := h.reg.Execute(ctx, "mcp__tk__asks", json.RawMessage(`{}`))
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil || res.Text() != "answered" || asked.Load() != 0 || strings.Contains(p.responses, "secret") {
		t.Errorf("roots: %q %v, consumer asked %d times, answered %s", res.Text(), err, asked.Load(), p.responses)
	}
}
