package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/mcpbridge/mcpbridge/agent"
	"github.com/mcpbridge/mcpbridge/internal/chatapi"
	"github.com/mcpbridge/mcpbridge/internal/retrieval"
	"github.com/mcpbridge/mcpbridge/tokens"
	"github.com/mcpbridge/mcpbridge/tool"
	"github.com/mcpbridge/mcpbridge/toolview"
)

// Shape of the agent row: the tools bridged for the step cost, the steps
// of one run, and how many runs are timed.
const (
	agentTools       = 300
	agentStepsPerRun = 10
	agentRuns        = 200
	agentSmokeRuns   = 20
)

// agentResults is what the agent row measured.
type agentResults struct {
	tools             int
	perStep           time.Duration // the loop alone: model and tools answer at once
	perStepEncoded    time.Duration // plus encoding each request as the API client does
	catalog           int           // tools of the token rows
	offTools, onTools int
	offTokens         int // tokens of the first request, search off
	onTokens          int // search on
}

// benchModel answers at once: a call of one tool for every step but the
// last of a run, then an answer. With encode it also encodes each request
// as chatapi.Client does before sending it.
type benchModel struct {
	tool   string
	n      int
	encode func(*agent.Request) ([]byte, error)
	first  *agent.Request
}

func (m *benchModel) Stream(_ context.Context, req *agent.Request, _ func(agent.Delta)) (*agent.Completion, error) {
	if m.first == nil {
		m.first = req
	}
	if m.encode != nil {
		if _, err := m.encode(req); err != nil {
			return nil, err
		}
	}
	m.n++
	msg := agent.Message{Role: "assistant", ReasoningContent: "r"}
	if m.n%agentStepsPerRun == 0 {
		msg.Content = "done"
		return &agent.Completion{Message: msg, FinishReason: "stop"}, nil
	}
	msg.ToolCalls = []agent.ToolCall{{ID: "c" + strconv.Itoa(m.n), Type: "function", Function: chatapi.FunctionCall{Name: m.tool, Arguments: `{}`}}}
	return &agent.Completion{Message: msg, FinishReason: "tool_calls"}, nil
}

// runAgent measures the loop's own cost per step with agentTools tools
// bridged, and the tokens of a request over the whole retrieval catalog
// with tool search off and on.
func runAgent(root string, o options, logf func(string, ...any)) (*agentResults, error) {
	cat, err := retrieval.LoadCatalog(filepath.Join(root, "testdata", "toolcatalog", "catalog.json"))
	if err != nil {
		return nil, err
	}
	all := cat.Tools()
	res := &agentResults{tools: agentTools, catalog: len(all)}
	runs := agentRuns
	if o.smoke {
		runs = agentSmokeRuns
	}
	for _, encode := range []bool{false, true} {
		d, err := stepCost(all[:agentTools], runs, encode)
		if err != nil {
			return nil, err
		}
		if encode {
			res.perStepEncoded = d
		} else {
			res.perStep = d
		}
	}
	logf("agent: step cost measured (%d runs of %d steps)", runs, agentStepsPerRun)
	for _, mode := range []toolview.Mode{toolview.ModeOff, toolview.ModeOn} {
		n, tok, err := requestTokens(all, mode)
		if err != nil {
			return nil, err
		}
		if mode == toolview.ModeOff {
			res.offTools, res.offTokens = n, tok
		} else {
			res.onTools, res.onTokens = n, tok
		}
	}
	logf("agent: request tokens measured")
	return res, nil
}

// stepCost is the median time of one step over runs runs.
func stepCost(tools []tool.Tool, runs int, encode bool) (time.Duration, error) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(tools...); err != nil {
		return 0, err
	}
	var per []time.Duration
	client := &chatapi.Client{}
	for range runs {
		m := &benchModel{tool: tools[0].Name}
		if encode {
			m.encode = client.Encode
		}
		a, err := agent.New(agent.Options{Model: m, Registry: reg, System: "bench", Approver: &agent.Policy{All: true}})
		if err != nil {
			return 0, err
		}
		start := time.Now()
		res, err := a.Run(context.Background(), "go")
		if err != nil {
			return 0, err
		}
		per = append(per, time.Since(start)/time.Duration(res.Steps))
	}
	return medianDur(per), nil
}

// requestTokens are the tools and the tokens of an agent's first request
// (system prompt, prompt, tools) over tools with tool search in mode.
func requestTokens(tools []tool.Tool, mode toolview.Mode) (int, int, error) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(tools...); err != nil {
		return 0, 0, err
	}
	v, err := toolview.New(reg, toolview.Config{Mode: mode})
	if err != nil {
		return 0, 0, err
	}
	defer v.Close()
	m := &benchModel{tool: tools[0].Name, n: agentStepsPerRun - 1}
	a, err := agent.New(agent.Options{Model: m, Registry: reg, Tools: v.Tools, System: "You are an agent."})
	if err != nil {
		return 0, 0, err
	}
	if _, err := a.Run(context.Background(), "open a ticket on gitlab"); err != nil {
		return 0, 0, err
	}
	body, err := json.Marshal(m.first)
	if err != nil {
		return 0, 0, err
	}
	n, err := tokens.Count(string(body))
	return len(m.first.Tools), n, err
}

func agentTable(o options, r *agentResults) table {
	us := func(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d.Nanoseconds())/1e3) }
	return table{
		title:   "Agent loop: its own cost per step, and the tokens of a request",
		command: o.command("agent"),
		header:  []string{"measure", "value", "target", "verdict"},
		rows: [][]string{
			{fmt.Sprintf("loop cost per step, %d tools bridged", r.tools), us(r.perStep), "≤ 1 ms", verdict(r.perStep.Seconds(), 0.001)},
			{fmt.Sprintf("the same, each request encoded as the API client sends it (%d tools)", r.tools), us(r.perStepEncoded), "≤ 1 ms", verdict(r.perStepEncoded.Seconds(), 0.001)},
			{fmt.Sprintf("request tokens, tool search off (%d of %d tools)", r.offTools, r.catalog), strconv.Itoa(r.offTokens), "–", "–"},
			{fmt.Sprintf("request tokens, tool search on (%d tools)", r.onTools), strconv.Itoa(r.onTokens), "–", fewer(float64(r.onTokens), float64(r.offTokens))},
		},
		notes: []string{
			fmt.Sprintf("Cost per step: median over runs of %d steps (9 tool calls, then an answer) of the wall time of agent.Agent.Run divided by its steps, with a model and a tool that answer at once: the request built from the conversation and the tools, the approval, the call through the registry, the result capped and added.", agentStepsPerRun),
			"Request tokens: the first request's JSON body (system prompt, prompt, tools) counted in o200k_base (package tokens); search on is search_tools alone until the model searches.",
		},
	}
}
