package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// The codes countingGate refuses with, as a policy and a rate limit would.
const (
	codeDenied  = -32030
	codeLimited = -32029
)

// countingGate is a Gate that counts, by tool, the calls it admits and
// the ends it is told of. It refuses "deny" with a JSON-RPC error, as a
// policy does, refuses "refuse" with an isError result, hides "secret"
// (ErrHidden), and admits "limited" once,
// then refuses it as a rate limit would: a token per admission.
type countingGate struct {
	mu      sync.Mutex
	entered map[string]int
	ended   map[string][]Outcome
	tokens  map[string]int // admissions left, for the tools with a limit
}

func newCountingGate() *countingGate {
	return &countingGate{entered: map[string]int{}, ended: map[string][]Outcome{}, tokens: map[string]int{"limited": 1}}
}

func (g *countingGate) Enter(ctx context.Context, c Call) (context.Context, func(Outcome) error, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.entered[c.Tool]++
	left, limited := g.tokens[c.Tool]
	switch {
	case c.Tool == "deny":
		return nil, nil, &jsonrpc.Error{Code: codeDenied, Message: `tool "deny" is not allowed`}
	case c.Tool == "secret":
		return nil, nil, fmt.Errorf("policy: %w", ErrHidden)
	case c.Tool == "refuse":
		return nil, nil, errors.New("not today")
	case limited && left == 0:
		return nil, nil, &jsonrpc.Error{Code: codeLimited, Message: `rate limit for "limited" reached`}
	case limited:
		g.tokens[c.Tool]--
	}
	return ctx, func(o Outcome) error {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.ended[c.Tool] = append(g.ended[c.Tool], o)
		return nil
	}, nil
}

// A task admitted but refused by its store (a session holds
// maxSessionTasks) is ended at once, failed: its admission is not held
// by a task that never runs.
func TestAdmissionTaskRefusedByItsStore(t *testing.T) {
	reg := tool.NewRegistry()
	release := make(chan struct{})
	if _, err := reg.Register(goTool("work", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return tool.Output{Content: []tool.Content{tool.Text("done")}}, nil
	})); err != nil {
		t.Fatal(err)
	}
	gate := newCountingGate()
	g := newGateway(t, reg, Options{Gate: gate})
	c := connectRaw(t, g)
	for range maxSessionTasks {
		taskOf(t, c.request("tools/call", taskParams("work")))
	}
	if over := c.request("tools/call", taskParams("work")); over.Error == nil || len(over.Result) > 0 {
		t.Errorf("a task over the session's bound: result %s, error %+v", over.Result, over.Error)
	}
	gate.expect(t, "work", counts{Entered: maxSessionTasks + 1, Ended: []Outcome{{Failed: true}}})
	close(release)
	// The slots are given back as each task's body returns, after its end.
	waitFor(t, "every task ended and its slot given back", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(gate.of("work").Ended) == maxSessionTasks+1 && g.slotsTaken() == 0 && g.inFlight == 0
	})
}

// counts is what g recorded of name: its admissions and refusals (every
// Enter), and the ends it was told of.
type counts struct {
	Entered int
	Ended   []Outcome
}

func (g *countingGate) of(name string) counts {
	g.mu.Lock()
	defer g.mu.Unlock()
	return counts{Entered: g.entered[name], Ended: g.ended[name]}
}

// expect fails t unless g recorded want of name.
func (g *countingGate) expect(t *testing.T, name string, want counts) {
	t.Helper()
	if d := cmp.Diff(want, g.of(name)); d != "" {
		t.Errorf("the Gate's record of %s (-want +got):\n%s", name, d)
	}
}

var okOutcome = []Outcome{{}}

// twiceTool asks its client two questions, one after the other, and
// answers with both replies.
func twiceTool(name string, background bool) tool.Tool {
	t := goTool(name, func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		var got []string
		for _, q := range []string{"first?", "second?"} {
			answer, err := tool.AskFrom(ctx)(ctx, tool.Ask{Method: tool.AskElicit, Params: json.RawMessage(`{"message":"` + q + `","requestedSchema":{"type":"object","properties":{"v":{"type":"string"}}}}`)})
			if err != nil {
				return tool.Output{}, err
			}
			got = append(got, string(answer))
		}
		return tool.Output{Content: []tool.Content{tool.Text(strings.Join(got, " "))}}, nil
	})
	t.Background = background
	return t
}

// admissionRegistry holds the tools the admission tests call: work,
// deny, refuse, limited, secret (each returning "done") and twice (twiceTool), all run
// as background work, so that they may be called as tasks of either
// kind.
func admissionRegistry(t *testing.T) *tool.Registry {
	t.Helper()
	reg := tool.NewRegistry()
	for _, name := range []string{"work", "deny", "refuse", "limited", "secret"} {
		tl := goTool(name, textBody("done"))
		tl.Background = true
		if _, err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := reg.Register(twiceTool("twice", true)); err != nil {
		t.Fatal(err)
	}
	return reg
}

// taskPath is one way a client reaches the gateway's tasks.
type taskPath struct {
	name string
	// open serves g (made with opts) and returns a client of it.
	open func(t *testing.T, opts Options) requester
	// call is the params of a tools/call of name as a task.
	call func(name string) string
	ext  bool // the 2026-07-28 extension's tasks
}

func taskParams(name string) string { return `{"name":"` + name + `","arguments":{},"task":{}}` }
func extParams(name string) string  { return `{"name":"` + name + `","arguments":{},` + meta2026 + `}` }

var taskPaths = []taskPath{
	{name: "stdio, 2025-11-25", call: taskParams, open: func(t *testing.T, opts Options) requester {
		return connectRaw(t, newGateway(t, admissionRegistry(t), opts))
	}},
	{name: "HTTP session, 2025-11-25", call: taskParams, open: func(t *testing.T, opts Options) requester {
		return openRawHTTP(t, serveHTTP(t, newGateway(t, admissionRegistry(t), opts), opts), "")
	}},
	{name: "stdio, 2026-07-28 extension", call: extParams, ext: true, open: func(t *testing.T, opts Options) requester {
		c := connectRawInit(t, "", newGateway(t, admissionRegistry(t), opts).ServeStdio)
		c.request("server/discover", `{`+meta2026+`}`)
		return c
	}},
	{name: "HTTP stateless, extension", call: extParams, ext: true, open: func(t *testing.T, opts Options) requester {
		opts.Stateless, opts.Authenticate = true, aliceOrBob
		base := serveHTTP(t, newGateway(t, admissionRegistry(t), opts), opts)
		return &rawHTTP{t: t, endpoint: base + "/mcp", token: "alice-secret", perRequest: true}
	}},
}

// createdTask returns the id of the task m answers a call as a task with,
// in the shapes of the extension when ext.
func createdTask(t *testing.T, m wireMessage, ext bool) string {
	t.Helper()
	if !ext {
		return taskOf(t, m)
	}
	var task struct {
		ResultType string `json:"resultType"`
		TaskID     string `json:"taskId"`
	}
	if m.Error != nil || json.Unmarshal(m.Result, &task) != nil || task.ResultType != "task" || task.TaskID == "" {
		t.Fatalf("no task created: result %s, error %+v", m.Result, m.Error)
	}
	return task.TaskID
}

// refusedWith fails t unless m is the JSON-RPC error code, with no
// result (so no task id).
func refusedWith(t *testing.T, what string, m wireMessage, code int) {
	t.Helper()
	if m.Error == nil || m.Error.Code != code || len(m.Result) > 0 {
		t.Errorf("%s: result %s, error %+v; want error %d and no task", what, m.Result, m.Error, code)
	}
}

// awaitTask waits until task id of c has status.
func awaitTask(t *testing.T, c requester, id, status string) wireMessage {
	t.Helper()
	var got wireMessage
	waitFor(t, "task "+id+" "+status, func() bool {
		got = c.request("tasks/get", idParams(id))
		return strings.Contains(string(got.Result), `"status":"`+status+`"`)
	})
	return got
}

// A call as a task is put to the Gate before the task exists, once for
// the task's whole life, on every path to tasks: an admitted task's
// call enters once and is ended once, with its outcome, when the task
// ends; a denied or rate-limited caller gets the Gate's JSON-RPC error
// and no task, one refused with an isError result that result and no
// task (tasks/list lists only the admitted ones); an extension task
// asked two questions, answered with tasks/update, enters once.
func TestAdmissionTaskGatedBeforeItExists(t *testing.T) {
	for _, p := range taskPaths {
		t.Run(p.name, func(t *testing.T) {
			gate := newCountingGate()
			c := p.open(t, Options{Gate: gate})

			id := createdTask(t, c.request("tools/call", p.call("work")), p.ext)
			awaitTask(t, c, id, "completed")
			gate.expect(t, "work", counts{Entered: 1, Ended: okOutcome})

			refusedWith(t, "a denied call as a task", c.request("tools/call", p.call("deny")), codeDenied)
			gate.expect(t, "deny", counts{Entered: 1})

			plain := c.request("tools/call", p.call("refuse"))
			if plain.Error != nil || !strings.Contains(string(plain.Result), `"isError":true`) || !strings.Contains(string(plain.Result), "tool call refused: not today") || strings.Contains(string(plain.Result), "taskId") {
				t.Errorf("a call as a task refused with an isError result: result %s, error %+v; want that result and no task", plain.Result, plain.Error)
			}
			gate.expect(t, "refuse", counts{Entered: 1})

			awaitTask(t, c, createdTask(t, c.request("tools/call", p.call("limited")), p.ext), "completed")
			refusedWith(t, "a rate-limited call as a task", c.request("tools/call", p.call("limited")), codeLimited)
			gate.expect(t, "limited", counts{Entered: 2, Ended: okOutcome})

			if !p.ext {
				if list := c.request("tasks/list", `{}`); strings.Count(string(list.Result), `"taskId"`) != 2 {
					t.Errorf("tasks/list: %s %+v; want the 2 admitted tasks only", list.Result, list.Error)
				}
				return
			}
			id = createdTask(t, c.request("tools/call", p.call("twice")), p.ext)
			for _, key := range []string{"q1", "q2"} {
				waitFor(t, "the task asking "+key, func() bool {
					return strings.Contains(string(c.request("tasks/get", idParams(id)).Result), `"inputRequests":{"`+key+`":`)
				})
				gate.expect(t, "twice", counts{Entered: 1})
				c.request("tasks/update", `{"taskId":"`+id+`","inputResponses":{"`+key+`":{"action":"accept","content":{"v":"`+key+`"}}},`+declaresTasks+`}`)
			}
			awaitTask(t, c, id, "completed")
			gate.expect(t, "twice", counts{Entered: 1, Ended: okOutcome})
		})
	}
}

// manualInMemory connects to g in memory as a 2026-07-28 client that
// offers elicitation and answers input-required results itself, as a
// stdio client of serve does.
func manualInMemory(t *testing.T, g *Gateway) *mcp.ClientSession {
	t.Helper()
	cs, _ := connectClient(t, g, manualSDK(t), nil)
	return cs
}

// A call asked two questions through input-required results is one
// call to the Gate: its first round enters, the rounds that park it end
// nothing, the retries that bring the answers enter nothing, and it is
// ended once, with its outcome, when it returns. A retry naming the call
// once it ended is refused at once, and enters nothing either.
func TestAdmissionInputRoundsEnterOnce(t *testing.T) {
	for name, open := range map[string]func(t *testing.T, opts Options) *mcp.ClientSession{
		"HTTP stateless": func(t *testing.T, opts Options) *mcp.ClientSession {
			opts.Stateless = true
			return manualClient(t, serveHTTP(t, newGateway(t, admissionRegistry(t), opts), opts), "")
		},
		"in memory, 2026-07-28": func(t *testing.T, opts Options) *mcp.ClientSession {
			return manualInMemory(t, newGateway(t, admissionRegistry(t), opts))
		},
	} {
		t.Run(name, func(t *testing.T) {
			gate := newCountingGate()
			cs := open(t, Options{Gate: gate})
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			params := &mcp.CallToolParams{Name: "twice", Arguments: map[string]any{}}
			var answers []string
			for round := 1; round <= 2; round++ {
				res, err := cs.CallTool(ctx, params)
				if err != nil || !res.NeedsInput() || len(res.InputRequests) != 1 {
					t.Fatalf("round %d: %+v, %v; want one question", round, res, err)
				}
				gate.expect(t, "twice", counts{Entered: 1})
				for key := range res.InputRequests {
					answers = append(answers, key)
					params = &mcp.CallToolParams{Name: "twice", Arguments: map[string]any{}, RequestState: res.RequestState,
						InputResponses: mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"v": key}}}}
				}
			}
			res, err := cs.CallTool(ctx, params)
			if err != nil || res.NeedsInput() || res.IsError || !strings.Contains(strings.Join(texts(res), ""), answers[1]) {
				t.Fatalf("the last round: %+v, %v; want the result", res, err)
			}
			gate.expect(t, "twice", counts{Entered: 1, Ended: okOutcome})

			_, err = cs.CallTool(ctx, params)
			if err == nil || !strings.Contains(err.Error(), "requestState is not one this gateway holds for this call") {
				t.Errorf("a retry of the ended call: %v; want the requestState refused", err)
			}
			gate.expect(t, "twice", counts{Entered: 1, Ended: okOutcome})
		})
	}
}

// A stateless extension task holds a call slot of its caller's, not of
// one key every such task shares: alice filling her share
// (MaxCallsPerSession) is refused her next task at once, with no task,
// and bob's task still runs.
func TestAdmissionStatelessTaskSlotsPerCaller(t *testing.T) {
	reg := tool.NewRegistry()
	release := make(chan struct{})
	hold := goTool("hold", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return tool.Output{Content: []tool.Content{tool.Text("held")}}, nil
	})
	hold.Background = true
	if _, err := reg.Register(hold); err != nil {
		t.Fatal(err)
	}
	opts := Options{Stateless: true, Authenticate: aliceOrBob, MaxCallsPerSession: 1}
	base := serveHTTP(t, newGateway(t, reg, opts), opts)
	alice := &rawHTTP{t: t, endpoint: base + "/mcp", token: "alice-secret", perRequest: true}
	bob := &rawHTTP{t: t, endpoint: base + "/mcp", token: "bob-secret", perRequest: true}

	held := createdTask(t, alice.request("tools/call", extParams("hold")), true)
	over := alice.request("tools/call", extParams("hold"))
	if over.Error == nil || len(over.Result) > 0 || !strings.Contains(over.Error.Message, "too many tool calls in flight for this caller (the gateway's limit is 1)") {
		t.Errorf("alice's task over her share: result %s, error %+v; want the limit and no task", over.Result, over.Error)
	}
	id := createdTask(t, bob.request("tools/call", extParams("hold")), true)
	if got := bob.request("tasks/get", idParams(id)); got.Error != nil || !strings.Contains(string(got.Result), `"status":"working"`) {
		t.Errorf("bob's task while alice holds her share: %s %+v; want it working", got.Result, got.Error)
	}
	close(release)
	awaitTask(t, alice, held, "completed")
	awaitTask(t, bob, id, "completed")
}

// answeredAsNone fails t unless c's call of hidden (params call)
// is answered exactly as its call of a tool that does not exist.
func answeredAsNone(t *testing.T, c requester, call func(string) string, hidden string) {
	t.Helper()
	got, want := c.request("tools/call", call(hidden)), c.request("tools/call", call("nosuch"))
	// An HTTP error's message is its body, which names the request's id.
	ids := regexp.MustCompile(`"id":[0-9]+`)
	if got.Error == nil || want.Error == nil || len(got.Result) > 0 || got.Error.Code != want.Error.Code ||
		ids.ReplaceAllString(strings.ReplaceAll(got.Error.Message, hidden, "nosuch"), "") != ids.ReplaceAllString(want.Error.Message, "") {
		t.Errorf("a call of hidden tool %s: result %s, error %+v; a tool that does not exist: %+v", hidden, got.Result, got.Error, want.Error)
	}
}

// A tool the Gate hides from its caller (ErrHidden) is, to that caller,
// a tool that does not exist, on every path a call takes, plain or as a
// task: the same error, and no task. The Gate still sees the call, and
// records its refusal.
func TestAdmissionHiddenToolUnknown(t *testing.T) {
	plain := func(name string) string { return `{"name":"` + name + `","arguments":{}}` }
	for _, p := range append([]taskPath{
		{name: "plain, stdio take", call: plain, open: func(t *testing.T, opts Options) requester {
			return connectRaw(t, newGateway(t, admissionRegistry(t), opts))
		}},
		{name: "plain, stdio through the SDK", call: plain, open: func(t *testing.T, opts Options) requester {
			return connectRawSDK(t, newGateway(t, admissionRegistry(t), opts))
		}},
		{name: "plain, HTTP session", call: plain, open: func(t *testing.T, opts Options) requester {
			return openRawHTTP(t, serveHTTP(t, newGateway(t, admissionRegistry(t), opts), opts), "")
		}},
	}, taskPaths...) {
		t.Run(p.name, func(t *testing.T) {
			gate := newCountingGate()
			c := p.open(t, Options{Gate: gate})
			answeredAsNone(t, c, p.call, "secret")
			gate.expect(t, "secret", counts{Entered: 1})
			if list := c.request("tasks/list", `{}`); !p.ext && strings.Contains(string(list.Result), `"taskId"`) {
				t.Errorf("tasks/list: %s; want no task", list.Result)
			}
		})
	}
}

var _ Gate = (*countingGate)(nil)
