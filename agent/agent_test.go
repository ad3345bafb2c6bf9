package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/agent"
	"github.com/mcpbridge/mcpbridge/internal/chatapi"
	"github.com/mcpbridge/mcpbridge/internal/chatapi/chattest"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/tool"
)

func TestMain(m *testing.M) { mcptest.VerifyTestMain(m) }

func model(url string) *chatapi.Client {
	return &chatapi.Client{BaseURL: url, Model: "m", APIKeyEnv: "K",
		Lookup: func(string) (string, bool) { return chattest.Key, true }}
}

// rendezvous is a pair of tools that each wait for the other to start:
// they finish only when the loop runs them at the same time.
func rendezvous(t *testing.T) *tool.Registry {
	reg := tool.NewRegistry()
	var wg sync.WaitGroup
	wg.Add(2)
	body := func(name string) tool.Func {
		return func(ctx context.Context, args json.RawMessage) (tool.Output, error) {
			wg.Done()
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-ctx.Done():
				return tool.Output{}, ctx.Err()
			case <-time.After(10 * time.Second):
				return tool.Output{}, errors.New("the other call never started")
			}
			return tool.Output{Content: []tool.Content{tool.Text(name + " got " + string(args))}}, nil
		}
	}
	for _, n := range []string{"zeta", "alpha"} {
		if _, err := reg.Register(tool.Tool{Name: n, Description: n + " tool", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}`), Execute: body(n)}); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// Two calls of one turn run concurrently and go back in the calls' order
// under their ids; the reasoning of the tool-call turn goes back with it
// (the scripted API refuses the conversation otherwise), the final
// answer's is dropped; tools are sent in a stable order; events come in
// order.
func TestParallelCallsAndReasoning(t *testing.T) {
	srv := chattest.New(t, chattest.Turns(
		chattest.Turn{Reasoning: "Both at once.", Calls: []chattest.Call{{Name: "zeta", Args: `{"x":1}`}, {Name: "alpha", Args: `{"x":2}`}}},
		chattest.Turn{Reasoning: "Done.", Text: "zeta and alpha answered."},
	))
	var events []agent.Event
	var msgs []agent.Message
	a, err := agent.New(agent.Options{Model: model(srv.URL), ModelName: "m", Registry: rendezvous(t), System: "Be brief.",
		Events: func(e agent.Event) { events = append(events, e) },
		Record: func(m agent.Message) error { msgs = append(msgs, m); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Run(context.Background(), "Call both.")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "zeta and alpha answered." || res.Steps != 2 || res.Usage.TotalTokens == 0 || res.Total != res.Usage {
		t.Errorf("result %+v", res)
	}
	reqs := srv.Requests()
	second := reqs[1].Messages
	want := []agent.Message{
		{Role: "system", Content: "Be brief."},
		{Role: "user", Content: "Call both."},
		{Role: "assistant", ReasoningContent: "Both at once.", ToolCalls: []agent.ToolCall{
			{ID: "call_1_0", Type: "function", Function: chatapi.FunctionCall{Name: "zeta", Arguments: `{"x":1}`}},
			{ID: "call_1_1", Type: "function", Function: chatapi.FunctionCall{Name: "alpha", Arguments: `{"x":2}`}}}},
		{Role: "tool", ToolCallID: "call_1_0", Content: `zeta got {"x":1}`},
		{Role: "tool", ToolCallID: "call_1_1", Content: `alpha got {"x":2}`},
	}
	if d := cmp.Diff(want, second); d != "" {
		t.Errorf("second request (-want +got):\n%s", d)
	}
	if d := cmp.Diff(append(want[1:], agent.Message{Role: "assistant", Content: "zeta and alpha answered."}), msgs); d != "" {
		t.Errorf("recorded (-want +got):\n%s", d)
	}
	for _, r := range reqs {
		if len(r.Tools) != 2 || r.Tools[0].Function.Name != "alpha" || r.Tools[1].Function.Name != "zeta" || r.Tools[0].Function.Strict {
			t.Errorf("tools %+v", r.Tools)
		}
	}
	var kinds []string
	var reasoning strings.Builder
	for _, e := range events {
		if e.Type == agent.EventReasoning {
			reasoning.WriteString(e.Text)
			continue
		}
		if e.Type != agent.EventText || kinds[len(kinds)-1] != agent.EventText {
			kinds = append(kinds, e.Type)
		}
	}
	if d := cmp.Diff([]string{"usage", "tool_call", "tool_call", "tool_result", "tool_result", "text", "usage"}, kinds); d != "" || reasoning.String() != "Both at once.Done." {
		t.Errorf("events (-want +got):\n%s\nreasoning %q", d, reasoning.String())
	}
}

// A result over the token cap is cut, the whole of it is in a file named
// to the model; the loop stops at --max-steps with ErrMaxSteps, every
// call answered.
func TestSpillAndMaxSteps(t *testing.T) {
	srv := chattest.New(t, chattest.Turns(chattest.Turn{Calls: []chattest.Call{{Name: "huge", Args: `{}`}}}))
	reg := tool.NewRegistry()
	big := strings.Repeat("line of a very large result ", 2000)
	reg.Register(tool.Tool{Name: "huge", Execute: func(context.Context, json.RawMessage) (tool.Output, error) {
		return tool.Output{Content: []tool.Content{tool.Text(big)}}, nil
	}})
	dir := t.TempDir()
	a, _ := agent.New(agent.Options{Model: model(srv.URL), Registry: reg, ResultTokens: 100, SpillDir: dir, MaxSteps: 2})
	_, err := a.Run(context.Background(), "go")
	if !errors.Is(err, agent.ErrMaxSteps) {
		t.Fatalf("error %v", err)
	}
	h := a.History()
	if len(h) != 5 || h[4].Role != "tool" {
		t.Fatalf("history %+v", h)
	}
	text := h[4].Content.(string)
	path := dir + "/huge-call_2_0.txt"
	if !strings.Contains(text, "result cut at 100 of its") || !strings.Contains(text, path) || len(text) > 1000 {
		t.Errorf("cut result: %q", text)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != big {
		t.Errorf("spilled file: %v", err)
	}
}

// scripted is a Model that answers with its completions in order, for
// answers the scripted API does not give (ids a model chose).
type scripted struct {
	mu    sync.Mutex
	turns []agent.Message
	reqs  []*agent.Request // the requests it answered
}

func (m *scripted) Stream(_ context.Context, req *agent.Request, _ func(agent.Delta)) (*agent.Completion, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reqs = append(m.reqs, req)
	msg := m.turns[0]
	m.turns = m.turns[1:]
	return &agent.Completion{Message: msg}, nil
}

// Each cut result has a file of its own, whatever ids the model gives its
// calls: one id twice (the two results went to one file, the model told
// twice of it) or of hundreds of characters (no file could be created).
func TestSpillFilePerResult(t *testing.T) {
	call := func(id, n string) agent.ToolCall {
		return agent.ToolCall{ID: id, Type: "function", Function: chatapi.FunctionCall{Name: "huge", Arguments: `{"n":"` + n + `"}`}}
	}
	long := strings.Repeat("i", 400)
	m := &scripted{turns: []agent.Message{
		{Role: "assistant", ToolCalls: []agent.ToolCall{call("x", "one"), call("x", "two"), call(long, "three")}},
		{Role: "assistant", ToolCalls: []agent.ToolCall{call("x", "four")}},
		{Role: "assistant", Content: "done"},
	}}
	reg := tool.NewRegistry()
	reg.Register(tool.Tool{Name: "huge", Execute: func(_ context.Context, args json.RawMessage) (tool.Output, error) {
		return tool.Output{Content: []tool.Content{tool.Text(strings.Repeat(string(args)+" ", 2000))}}, nil
	}})
	var mu sync.Mutex
	spilled := map[string]string{} // file: the arguments of the result it holds
	a, _ := agent.New(agent.Options{Model: m, Registry: reg, ResultTokens: 100, SpillDir: t.TempDir(), Events: func(e agent.Event) {
		if e.Type == agent.EventToolResult {
			mu.Lock()
			defer mu.Unlock()
			if e.Spilled == "" {
				t.Errorf("a result of %d bytes was not kept: %.300s", len(e.Text), e.Text)
				return
			}
			if _, dup := spilled[e.Spilled]; dup {
				t.Errorf("two results spilled to %s", e.Spilled)
			}
			b, err := os.ReadFile(e.Spilled)
			spilled[e.Spilled] = strings.Fields(string(b) + " ?")[0]
			if err != nil {
				t.Error(err)
			}
		}
	}})
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, args := range spilled {
		got = append(got, args)
	}
	slices.Sort(got)
	if d := cmp.Diff([]string{`{"n":"four"}`, `{"n":"one"}`, `{"n":"three"}`, `{"n":"two"}`}, got); d != "" {
		t.Errorf("the files hold (-want +got):\n%s", d)
	}
}

// An answer the API ended before the model did (its output limit, a
// filter, DeepSeek short of resources) is told as such: it was taken
// for the whole answer without a word.
func TestAnswerEndedEarlyIsTold(t *testing.T) {
	for reason, want := range map[string]string{
		"length":                       "the most tokens an answer may have",
		"content_filter":               "content filter",
		"insufficient_system_resource": "ran short of resources",
		"something_new":                "something_new",
	} {
		m := &finishing{reason: reason}
		var notices []string
		a, _ := agent.New(agent.Options{Model: m, Registry: tool.NewRegistry(), Events: func(e agent.Event) {
			if e.Type == agent.EventNotice {
				notices = append(notices, e.Text)
			}
		}})
		res, err := a.Run(context.Background(), "go")
		if err != nil || res.Text != "half an ans" {
			t.Fatalf("%s: %v %+v", reason, err, res)
		}
		if len(notices) != 1 || !strings.Contains(notices[0], "the answer ended before the model did") || !strings.Contains(notices[0], want) {
			t.Errorf("%s: notices %q", reason, notices)
		}
	}
	for _, reason := range []string{"stop", ""} {
		var notices []string
		a, _ := agent.New(agent.Options{Model: &finishing{reason: reason}, Registry: tool.NewRegistry(), Events: func(e agent.Event) {
			if e.Type == agent.EventNotice {
				notices = append(notices, e.Text)
			}
		}})
		if _, err := a.Run(context.Background(), "go"); err != nil || len(notices) != 0 {
			t.Errorf("%q: %v, notices %q", reason, err, notices)
		}
	}
}

// finishing answers "half an ans" with its finish reason.
type finishing struct{ reason string }

func (m *finishing) Stream(context.Context, *agent.Request, func(agent.Delta)) (*agent.Completion, error) {
	return &agent.Completion{Message: agent.Message{Role: "assistant", Content: "half an ans"}, FinishReason: m.reason}, nil
}

// A turn whose calls could not all be recorded with their results is
// not kept in the conversation either, as a resumed session would not
// keep it: the next Run sent the API calls without their results, which
// it refuses, at every prompt after.
func TestUnrecordedTurnNotKept(t *testing.T) {
	for _, failAt := range []string{"assistant", "tool"} {
		srv := chattest.New(t, chattest.Turns(chattest.Turn{Calls: []chattest.Call{{Name: "zeta", Args: `{"x":1}`}, {Name: "alpha", Args: `{"x":2}`}}}, chattest.Turn{Text: "ok"}))
		failed := false
		a, _ := agent.New(agent.Options{Model: model(srv.URL), Registry: rendezvous(t), Record: func(m agent.Message) error {
			if m.Role == failAt && !failed {
				failed = true
				return errors.New("disk full")
			}
			return nil
		}})
		if _, err := a.Run(context.Background(), "go"); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Fatalf("%s: %v", failAt, err)
		}
		if d := cmp.Diff([]agent.Message{{Role: "user", Content: "go"}}, a.History()); d != "" {
			t.Errorf("%s: history after the failed turn (-want +got):\n%s", failAt, d)
		}
	}
}

// A prompt the model never answered (the API failed) and the next one
// are one turn, in the run and in its session read back: the same
// question asked again is sent once, another after it in the same user
// turn (two user turns in a row were sent, the question twice).
func TestPromptAfterAFailedRunJoinsIt(t *testing.T) {
	dir := t.TempDir()
	s, err := agent.NewSession(dir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	srv := chattest.New(t, chattest.Turns(chattest.Turn{Text: "Paris."}, chattest.Turn{Text: "Rome."}))
	a, _ := agent.New(agent.Options{Model: model(srv.URL), Registry: tool.NewRegistry(), Record: s.Append})
	ctx := context.Background()
	refused := chattest.Fault{Status: 402, Message: "Insufficient Balance"}
	srv.Fail(refused, refused)
	for range 2 {
		if _, err := a.Run(ctx, "Capital of France?"); err == nil {
			t.Fatal("a run the API refused did not fail")
		}
	}
	if res, err := a.Run(ctx, "Capital of France?"); err != nil || res.Text != "Paris." {
		t.Fatalf("asked again: %v, %+v", err, res)
	}
	srv.Fail(refused)
	if _, err := a.Run(ctx, "Capital of Italy?"); err == nil {
		t.Fatal("a run the API refused did not fail")
	}
	if _, err := a.Run(ctx, "And Spain's?"); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	want := []agent.Message{{Role: "user", Content: "Capital of France?"}, {Role: "assistant", Content: "Paris."},
		{Role: "user", Content: "Capital of Italy?\n\nAnd Spain's?"}}
	if d := cmp.Diff(want, reqs[len(reqs)-1].Messages); d != "" {
		t.Errorf("the last request (-want +got):\n%s", d)
	}
	s.Close()
	re, err := agent.OpenSession(dir, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	want = append(want, agent.Message{Role: "assistant", Content: "Rome."})
	if d := cmp.Diff(want, re.Messages()); d != "" {
		t.Errorf("read back (-want +got):\n%s", d)
	}
}

// A call the model sent without an id (some local servers' streams carry
// none) is given one, and its result goes back under it: a tool message
// without tool_call_id, which the chat-completions API requires, was
// sent, and two such results could not be told apart.
func TestCallWithoutIDGetsOne(t *testing.T) {
	call := func(n string) agent.ToolCall {
		return agent.ToolCall{Type: "function", Function: chatapi.FunctionCall{Name: "echo", Arguments: `{"n":"` + n + `"}`}}
	}
	m := &scripted{turns: []agent.Message{
		{Role: "assistant", ToolCalls: []agent.ToolCall{call("one"), call("two")}},
		{Role: "assistant", Content: "done"},
	}}
	reg := tool.NewRegistry()
	reg.Register(tool.Tool{Name: "echo", Execute: func(_ context.Context, args json.RawMessage) (tool.Output, error) {
		return tool.Output{Content: []tool.Content{tool.Text(string(args))}}, nil
	}})
	a, _ := agent.New(agent.Options{Model: m, Registry: reg})
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	msgs := m.reqs[1].Messages
	calls := msgs[1].ToolCalls
	if len(msgs) != 4 || calls[0].ID == "" || calls[1].ID == "" || calls[0].ID == calls[1].ID ||
		msgs[2].ToolCallID != calls[0].ID || msgs[3].ToolCallID != calls[1].ID {
		t.Errorf("sent back: %+v", msgs)
	}
}

// deny refuses every call and counts the asks.
type deny struct{ asked []string }

func (d *deny) Approve(_ context.Context, c agent.Call) (bool, error) {
	d.asked = append(d.asked, c.Name)
	return false, nil
}

// A denied call does not run; the model reads the refusal.
func TestDenied(t *testing.T) {
	srv := chattest.New(t, chattest.Turns(chattest.Turn{Calls: []chattest.Call{{Name: "boom", Args: `{}`}}}, chattest.Turn{Text: "ok"}))
	reg := tool.NewRegistry()
	ran := false
	reg.Register(tool.Tool{Name: "boom", Execute: func(context.Context, json.RawMessage) (tool.Output, error) { ran = true; return tool.Output{}, nil }})
	d := &deny{}
	a, _ := agent.New(agent.Options{Model: model(srv.URL), Registry: reg, Approver: d})
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if ran || len(d.asked) != 1 || !strings.Contains(a.History()[2].Content.(string), "the user denied this tool call") {
		t.Errorf("ran %v, asked %v, history %+v", ran, d.asked, a.History())
	}
}

// With strict, tools whose schemas allow it are strict (closed) and sent
// to the strict model; the others go as they are, and a notice says so
// once.
func TestStrict(t *testing.T) {
	srv := chattest.New(t, chattest.Turns(chattest.Turn{Text: "ok"}))
	beta := chattest.New(t, chattest.Turns(chattest.Turn{Text: "ok"}))
	reg := tool.NewRegistry()
	noop := func(context.Context, json.RawMessage) (tool.Output, error) { return tool.Output{}, nil }
	reg.Register(
		tool.Tool{Name: "closed", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`), Execute: noop},
		tool.Tool{Name: "optional", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`), Execute: noop},
	)
	var notices []string
	a, _ := agent.New(agent.Options{Model: model(srv.URL), StrictModel: model(beta.URL), Strict: true, Registry: reg,
		Events: func(e agent.Event) {
			if e.Type == agent.EventNotice {
				notices = append(notices, e.Text)
			}
		}})
	for range 2 {
		if _, err := a.Run(context.Background(), "go"); err != nil {
			t.Fatal(err)
		}
	}
	if len(srv.Requests()) != 0 || len(beta.Requests()) != 2 {
		t.Fatalf("requests: %d plain, %d strict", len(srv.Requests()), len(beta.Requests()))
	}
	tools := beta.Requests()[0].Tools
	if !tools[0].Function.Strict || string(tools[0].Function.Parameters) != `{"additionalProperties":false,"properties":{"a":{"type":"string"}},"required":["a"],"type":"object"}` || tools[1].Function.Strict {
		t.Errorf("tools %+v", tools)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "1 of 2 tools are sent without strict") || !strings.Contains(notices[0], "optional") {
		t.Errorf("notices %q", notices)
	}
}

// Schemas strict calling can take, and those it cannot without changing
// what the tool accepts.
func TestStrictSchema(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{`{"type":"object"}`, true},
		{`{"type":"object","properties":{"o":{"type":"object","properties":{"b":{"type":"boolean"}},"required":["b"]}},"required":["o"]}`, true},
		{`{"type":"object","properties":{"o":{"type":"object","properties":{"b":{"type":"boolean"}}}},"required":["o"]}`, false},
		{`{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"string"}}},"required":["m"]}`, false},
		{`{"type":"object","properties":{"l":{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"object","properties":{},"required":[]}]}}},"required":["l"]}`, true},
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":[1]}`, false},
		// A free-form object below the top (env vars, headers) would be
		// locked to {}: the tool is not strict.
		{`{"type":"object","properties":{"env":{"type":"object"}},"required":["env"]}`, false},
		{`{"type":"object","properties":{"l":{"type":"array","items":{"type":"object"}}},"required":["l"]}`, false},
		{`{"type":"object","properties":{"o":{"anyOf":[{"type":"object"},{"type":"null"}]}},"required":["o"]}`, false},
		{`{"type":"object","properties":{"e":{"type":"object","additionalProperties":false}},"required":["e"]}`, true},
		{`[1]`, false},
		{`{"type":"string"}`, false},
	} {
		if _, ok := agent.StrictSchema(json.RawMessage(c.in)); ok != c.ok {
			t.Errorf("%s: %v, want %v", c.in, ok, c.ok)
		}
	}
}

// A session is saved a message a line; reopened, it gives the messages
// back, less a last turn whose calls were not all answered (the run was
// killed mid-turn), and goes on appending; Latest finds the one used last.
func TestSessions(t *testing.T) {
	dir := t.TempDir()
	s := killedMidTurn(t, dir)
	s.Close()
	later, _ := agent.NewSession(dir, time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC))
	if err := later.Append(agent.Message{Role: "user", Content: "later"}); err != nil {
		t.Fatal(err)
	}
	later.Close()
	if id, err := agent.Latest(dir); err != nil || id != later.ID {
		t.Errorf("latest %q %v, want %q", id, err, later.ID)
	}
	re, err := agent.OpenSession(dir, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	if d := cmp.Diff([]agent.Message{{Role: "user", Content: "hi"}}, re.Messages()); d != "" {
		t.Errorf("reopened (-want +got):\n%s", d)
	}
	if err := os.WriteFile(dir+"/bad.jsonl", []byte("{\"role\":\"user\"}\nnot json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := agent.OpenSession(dir, "bad"); err == nil || !strings.Contains(err.Error(), "bad.jsonl:2: not a saved message") {
		t.Errorf("bad session: %v", err)
	}
	if err := os.WriteFile(dir+"/norole.jsonl", []byte("{\"content\":\"hi\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := agent.OpenSession(dir, "norole"); err == nil || !strings.HasSuffix(err.Error(), "norole.jsonl:1: not a saved message: it has no role") {
		t.Errorf("session line without a role: %v", err)
	}
	if _, err := agent.Latest(t.TempDir()); !errors.Is(err, agent.ErrNoSession) {
		t.Errorf("empty dir: %v", err)
	}
}

// Tools keep the order they were first sent in; a tool that appears later
// (a search loaded it) comes last, so the request's prefix stays.
func TestToolOrderStable(t *testing.T) {
	srv := chattest.New(t, chattest.Turns(chattest.Turn{Calls: []chattest.Call{{Name: "b", Args: `{}`}}}, chattest.Turn{Text: "ok"}))
	reg := tool.NewRegistry()
	noop := func(context.Context, json.RawMessage) (tool.Output, error) { return tool.Output{}, nil }
	for _, n := range []string{"a", "b", "c"} {
		reg.Register(tool.Tool{Name: n, Execute: noop})
	}
	step := 0
	a, _ := agent.New(agent.Options{Model: model(srv.URL), Registry: reg, Tools: func() ([]tool.Tool, error) {
		step++
		all := reg.List()
		if step == 1 {
			return all[1:], nil // b, c: a not loaded yet
		}
		return all, nil
	}})
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, r := range srv.Requests() {
		var names []string
		for _, tl := range r.Tools {
			names = append(names, tl.Function.Name)
		}
		got = append(got, names)
	}
	if d := cmp.Diff([][]string{{"b", "c"}, {"b", "c", "a"}}, got); d != "" {
		t.Errorf("tool order (-want +got):\n%s", d)
	}
}

// A session whose last line a crash (or a full disk) tore still opens: the
// torn line is left out and dropped from the file, and the messages saved
// after it read back, each on its own line.
func TestSessionTornLastLine(t *testing.T) {
	dir := t.TempDir()
	whole := "{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"assistant\",\"content\":\"hello\"}\n"
	for name, tail := range map[string]string{"garbled": `{"role":"us`, "unterminated": `{"role":"user","content":"again"}`} {
		if err := os.WriteFile(filepath.Join(dir, name+".jsonl"), []byte(whole+tail), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := agent.OpenSession(dir, name)
		if err != nil {
			t.Fatalf("%s: a session with a torn last line: %v", name, err)
		}
		if got := len(s.Messages()); got != 2 {
			t.Errorf("%s: %d messages, want the 2 whole ones", name, got)
		}
		if err := s.Append(agent.Message{Role: "user", Content: "next"}); err != nil {
			t.Fatal(err)
		}
		s.Close()
		re, err := agent.OpenSession(dir, name)
		if err != nil {
			t.Fatalf("%s: reopened after a message was saved past the torn line: %v", name, err)
		}
		if got := re.Messages(); len(got) != 3 || got[2].Content != "next" {
			t.Errorf("%s: reopened: %+v", name, got)
		}
		re.Close()
	}
}

// A last turn left without all its results (the run was killed while
// its calls ran) is dropped from the file too when the session is
// resumed: kept there, it ended up mid-conversation once more messages
// were saved, where it is no longer the last, and every later resume sent
// the API a conversation it refuses.
func TestSessionIncompleteTurnDroppedFromFile(t *testing.T) {
	dir := t.TempDir()
	s := killedMidTurn(t, dir)
	s.Close()
	re, err := agent.OpenSession(dir, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []agent.Message{{Role: "user", Content: "go on"}, {Role: "assistant", Content: "done"}} {
		if err := re.Append(m); err != nil {
			t.Fatal(err)
		}
	}
	re.Close()
	again, err := agent.OpenSession(dir, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	// "hi", its answer dropped, and "go on" are one turn.
	want := []agent.Message{{Role: "user", Content: "hi\n\ngo on"}, {Role: "assistant", Content: "done"}}
	if d := cmp.Diff(want, again.Messages()); d != "" {
		t.Errorf("resumed twice (-want +got):\n%s", d)
	}
}

// A session is continued by one run at a time: a second opening while
// the first is open is refused with why (two runs appended their turns to
// one file, interleaved, and every resume of it after sent the API turns
// whose calls had no results), and opens once the first is closed.
func TestSessionOneRunAtATime(t *testing.T) {
	dir := t.TempDir()
	s := savedSession(t, dir, agent.Message{Role: "user", Content: "hi"})
	if other, err := agent.OpenSession(dir, s.ID); err == nil || !strings.Contains(err.Error(), "session "+s.ID+" is open in another run") {
		t.Errorf("opened while a new session is in use: %v", err)
		if other != nil {
			other.Close()
		}
	}
	s.Close()
	re, err := agent.OpenSession(dir, s.ID)
	if err != nil {
		t.Fatalf("after the first run ended: %v", err)
	}
	if other, err := agent.OpenSession(dir, s.ID); err == nil || !strings.Contains(err.Error(), "is open in another run") {
		t.Errorf("opened while a resumed session is in use: %v", err)
		if other != nil {
			other.Close()
		}
	}
	re.Close()
}

// Latest finds the newest session of a directory whose name holds what a
// glob reads as a pattern (a home or state directory named "work[2]" held
// no session for --continue).
func TestLatestInDirectoryWithBrackets(t *testing.T) {
	for _, name := range []string{"state[2]", "a*b", "bad["} {
		dir := filepath.Join(t.TempDir(), name)
		s := savedSession(t, dir, agent.Message{Role: "user", Content: "hi"})
		s.Close()
		if id, err := agent.Latest(dir); err != nil || id != s.ID {
			t.Errorf("%s: latest %q %v, want %q", name, id, err, s.ID)
		}
	}
}

// Latest is the session used last, not the one created last: a session
// resumed yesterday and written to is the one --continue goes on with
// today, though another was created after it; on a tie, the later
// created.
func TestLatestIsLastUsed(t *testing.T) {
	dir := t.TempDir()
	older := savedSession(t, dir, agent.Message{Role: "user", Content: "hi"})
	older.Close()
	newer, err := agent.NewSession(dir, time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if err := newer.Append(agent.Message{Role: "user", Content: "hello"}); err != nil {
		t.Fatal(err)
	}
	newer.Close()
	used := func(s *agent.Session, at time.Time) {
		t.Helper()
		if err := os.Chtimes(filepath.Join(dir, s.ID+".jsonl"), at, at); err != nil {
			t.Fatal(err)
		}
	}
	created, resumed := time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC), time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	used(newer, created)
	used(older, resumed)
	if id, err := agent.Latest(dir); err != nil || id != older.ID {
		t.Errorf("latest %q %v, want %q, the one written last", id, err, older.ID)
	}
	used(newer, resumed)
	if id, err := agent.Latest(dir); err != nil || id != newer.ID {
		t.Errorf("written at the same time: latest %q %v, want %q, the later created", id, err, newer.ID)
	}

	// Neither a session resumed and left without a word, nor a run left
	// before its first message, is the one used last.
	used(newer, created)
	opened, err := agent.OpenSession(dir, newer.ID)
	if err != nil {
		t.Fatal(err)
	}
	opened.Close()
	empty, err := agent.NewSession(dir, time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	empty.Close()
	if id, err := agent.Latest(dir); err != nil || id != older.ID {
		t.Errorf("after a resume without a word and an empty run: latest %q %v, want %q, the one written last", id, err, older.ID)
	}
}

// A message too long to read back is not saved, and neither is any after
// it: the session keeps the conversation's first messages whole and
// still opens, where a line past the reader's bound would have made it
// impossible to resume.
func TestSessionStopsSavingAtAMessageTooLong(t *testing.T) {
	dir := t.TempDir()
	s := savedSession(t, dir, agent.Message{Role: "user", Content: "hi"})
	if err := s.Append(agent.Message{Role: "user", Content: strings.Repeat("\x01", 12<<20)}); err == nil || !strings.Contains(err.Error(), "longer than a session keeps") {
		t.Errorf("a message of 72 MiB once escaped: %v, want it refused", err)
	}
	if err := s.Append(agent.Message{Role: "user", Content: "after"}); err == nil {
		t.Error("a message after the one refused was saved")
	}
	s.Close()
	re, err := agent.OpenSession(dir, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	if got := re.Messages(); len(got) != 1 || got[0].Content != "hi" {
		t.Errorf("reopened: %+v, want the first message", got)
	}
}

// A session's file is read up to a bound, not whole whatever its size: a
// file past it (one grown without end, or not a session at all) is
// refused naming the file, the bound and what to do, before it is read;
// a long session of ordinary messages still opens. A session is not
// written past what it reads back: a message that would take its file
// past the bound stops the saving, and the file still opens.
func TestSessionFileBounded(t *testing.T) {
	dir := t.TempDir()
	// Answers: the same prompt twice in a row reads back as one.
	line, err := json.Marshal(agent.Message{Role: "assistant", Content: strings.Repeat("a", 1<<20)})
	if err != nil {
		t.Fatal(err)
	}
	line = append(line, '\n')
	write := func(id string, lines int) string {
		t.Helper()
		path := filepath.Join(dir, id+".jsonl")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for range lines {
			if _, err := f.Write(line); err != nil {
				t.Fatal(err)
			}
		}
		return path
	}

	huge := write("huge", 65)
	s, err := agent.OpenSession(dir, "huge")
	if err == nil {
		s.Close()
	}
	size := fmt.Sprintf("is %d bytes,", 65*len(line))
	for _, want := range []string{huge, size, "over the 64 MiB a session keeps", "start a new session"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a session of 65 MiB: %v, want it refused saying %q", err, want)
		}
	}

	write("long", 60)
	s, err = agent.OpenSession(dir, "long")
	if err != nil {
		t.Fatalf("a session of 60 MiB: %v", err)
	}
	if got := len(s.Messages()); got != 60 {
		t.Errorf("a session of 60 MiB: %d messages, want 60", got)
	}
	for range 4 { // the 4th would take the file past 64 MiB
		s.Append(agent.Message{Role: "assistant", Content: strings.Repeat("a", 1<<20)})
	}
	if err := s.Append(agent.Message{Role: "user", Content: "after"}); err == nil || !strings.Contains(err.Error(), "start a new session") {
		t.Errorf("a message past the bound: %v, want the saving stopped", err)
	}
	s.Close()
	re, err := agent.OpenSession(dir, "long")
	if err != nil {
		t.Fatalf("reopened after a message past the bound: %v", err)
	}
	defer re.Close()
	if got := len(re.Messages()); got != 63 {
		t.Errorf("reopened: %d messages, want the 63 within the bound", got)
	}
}

// Once a session has stopped saving, each message refused says which
// session, why, and what to do: the error repeated at every later prompt
// said only that it had stopped.
func TestSessionStoppedSaysWhatToDo(t *testing.T) {
	s, err := agent.NewSession(t.TempDir(), time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Append(agent.Message{Role: "user", Content: strings.Repeat("\x01", 12<<20)})
	err = s.Append(agent.Message{Role: "user", Content: "after"})
	for _, want := range []string{"session " + s.ID + " stopped saving", "longer than a session keeps", "start a new session", "resumes from its last saved message"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to say %q", err, want)
		}
	}
}

// A call of a name no tool has (a hostile result may tell the model to
// call mcp__github or mcp__*) is not put to the Approver, where an
// "always" answer would allow whatever the name matches: the model reads
// that there is no such tool, or why a withheld one is withheld. Nor is
// a call whose arguments are not JSON: it cannot run, whatever the
// answer.
func TestUnknownToolNotAsked(t *testing.T) {
	srv := chattest.New(t, chattest.Turns(chattest.Turn{Calls: []chattest.Call{{Name: "mcp__*", Args: `{}`}, {Name: "mcp__s__echo", Args: `{}`}, {Name: "known", Args: `{"a":`}}}, chattest.Turn{Text: "ok"}))
	reg := tool.NewRegistry()
	if _, err := reg.Register(tool.Tool{Name: "known", Execute: func(context.Context, json.RawMessage) (tool.Output, error) {
		t.Error("a call whose arguments are not JSON ran")
		return tool.Output{}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	if err := reg.NewSource().PublishOffer(tool.Offer{Withheld: map[string]string{"mcp__s__echo": "changed since pinned"}}); err != nil {
		t.Fatal(err)
	}
	d := &deny{}
	var events []agent.Event
	a, _ := agent.New(agent.Options{Model: model(srv.URL), Registry: reg, Approver: d,
		Events: func(e agent.Event) { events = append(events, e) }})
	if _, err := a.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	want := []string{`Error: unknown tool "mcp__*"`, `Error: tool "mcp__s__echo" is withheld: changed since pinned`, "Error: invalid arguments: unexpected end of JSON input"}
	got := []string{a.History()[2].Content.(string), a.History()[3].Content.(string), a.History()[4].Content.(string)}
	if diff := cmp.Diff(want, got); diff != "" || len(d.asked) != 0 {
		t.Errorf("asked %v; the model read (-want +got):\n%s", d.asked, diff)
	}
	var results []agent.Event
	for _, e := range events {
		if e.Type == agent.EventToolResult {
			results = append(results, e)
		}
	}
	if len(results) != 3 || !results[0].IsError || results[0].Denied || results[0].Text != want[0] || results[2].Text != want[2] {
		t.Errorf("result events %+v", results)
	}
}

// killedMidTurn saves a session in dir as a run killed while its calls
// ran leaves it: a turn of two calls, one answered.
func killedMidTurn(t *testing.T, dir string) *agent.Session {
	call := agent.Message{Role: "assistant", ReasoningContent: "r", ToolCalls: []agent.ToolCall{{ID: "a"}, {ID: "b"}}}
	return savedSession(t, dir, agent.Message{Role: "user", Content: "hi"}, call, agent.Message{Role: "tool", ToolCallID: "a", Content: "1"})
}

// savedSession is a new session in dir, made at a fixed time, that saved
// msgs.
func savedSession(t *testing.T, dir string, msgs ...agent.Message) *agent.Session {
	t.Helper()
	s, err := agent.NewSession(dir, time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if err := s.Append(m); err != nil {
			t.Fatal(err)
		}
	}
	return s
}
