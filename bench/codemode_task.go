package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbridge/mcpbridge/agent"
	"github.com/mcpbridge/mcpbridge/codemode"
	"github.com/mcpbridge/mcpbridge/internal/chatapi"
	"github.com/mcpbridge/mcpbridge/tokens"
	"github.com/mcpbridge/mcpbridge/tool"
)

// Shape of the six-call task: its calls, the bytes of each result (an
// intermediate result the task needs only a line of), and the timed runs.
const (
	taskCalls       = 6
	taskResultBytes = 2048
	taskRuns        = 50
	taskSmokeRuns   = 5
)

// taskResult is one way of running the task.
type taskResult struct {
	turns, tokens int
	wall          time.Duration // median run
}

// taskModel is the scripted model of the task: direct, one call a turn
// (each call needs the one before), then the answer; in code mode, one
// run_code of a program making the six calls, then the answer. With
// record it keeps every request's JSON body.
type taskModel struct {
	tools   []tool.Tool // the task's, in order
	code    bool
	n       int
	record  bool
	bodies  [][]byte
	program string
}

func (m *taskModel) Stream(_ context.Context, req *agent.Request, _ func(agent.Delta)) (*agent.Completion, error) {
	if m.record {
		body, err := json.Marshal(req)
		if err != nil {
			return nil, err
		}
		m.bodies = append(m.bodies, body)
	}
	m.n++
	msg := agent.Message{Role: "assistant", ReasoningContent: "r"}
	call := func(name, args string) (*agent.Completion, error) {
		msg.ToolCalls = []agent.ToolCall{{ID: "c" + strconv.Itoa(m.n), Type: "function", Function: chatapi.FunctionCall{Name: name, Arguments: args}}}
		return &agent.Completion{Message: msg, FinishReason: "tool_calls"}, nil
	}
	switch {
	case m.code && m.n == 1:
		args, err := json.Marshal(map[string]string{"code": m.program})
		if err != nil {
			return nil, err
		}
		return call(codemode.RunName, string(args))
	case !m.code && m.n <= len(m.tools):
		return call(m.tools[m.n-1].Name, `{}`)
	}
	msg.Content = "done"
	return &agent.Completion{Message: msg, FinishReason: "stop"}, nil
}

// taskTools are six tools of the catalog's first namespace that has six,
// each answering a result of taskResultBytes.
func taskTools(all []tool.Tool) ([]tool.Tool, error) {
	byServer := map[string][]tool.Tool{}
	for _, t := range all {
		s := t.Origin.Server
		if byServer[s] = append(byServer[s], t); len(byServer[s]) == taskCalls {
			out := byServer[s]
			line := strings.Repeat("x", 60) + "\n"
			text := strings.Repeat(line, taskResultBytes/len(line))
			for i := range out {
				out[i].Execute = func(context.Context, json.RawMessage) (tool.Output, error) {
					return tool.Output{Content: []tool.Content{tool.Text(text)}}, nil
				}
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("the catalog has no server with %d tools", taskCalls)
}

// runTask runs the task over tools, direct or in code mode: once
// recording its requests (turns, tokens), then runs times.
func runTask(tools []tool.Tool, code bool, runs int) (taskResult, error) {
	reg := tool.NewRegistry()
	if _, err := reg.Register(tools...); err != nil {
		return taskResult{}, err
	}
	opts := agent.Options{Registry: reg, System: "You are an agent.", Approver: &agent.Policy{All: true}}
	program := ""
	if code {
		view := codemode.RegistryView(reg)
		codeReg := tool.NewRegistry()
		if _, err := codeReg.Register(codemode.Tools(view, codemode.Options{})...); err != nil {
			return taskResult{}, err
		}
		api := codemode.NewAPI(tools)
		opts.Registry, opts.System = codeReg, opts.System+"\n\nThe tools are a TypeScript API; call them from run_code.\n\n"+api.Declaration()
		var calls []string
		for _, t := range tools {
			calls = append(calls, fmt.Sprintf("  n += (await tools.call(%q, {})).text.length;", t.Name))
		}
		program = "let n = 0;\n" + strings.Join(calls, "\n") + "\nreturn {bytes: n}"
	}
	var res taskResult
	var walls []time.Duration
	for i := range runs + 1 {
		m := &taskModel{tools: tools, code: code, record: i == 0, program: program}
		o := opts
		o.Model = m
		a, err := agent.New(o)
		if err != nil {
			return taskResult{}, err
		}
		start := time.Now()
		if _, err := a.Run(context.Background(), "Gather what the six tools say and sum it up."); err != nil {
			return taskResult{}, err
		}
		if i > 0 {
			walls = append(walls, time.Since(start))
			continue
		}
		res.turns = len(m.bodies)
		for _, b := range m.bodies {
			n, err := tokens.Count(string(b))
			if err != nil {
				return taskResult{}, err
			}
			res.tokens += n
		}
	}
	res.wall = medianDur(walls)
	return res, nil
}

// taskTable is the six-call task, direct against code mode.
func taskTable(o options, direct, code taskResult) table {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1e3) }
	return table{
		title:   "Code mode: a six-call task, direct against code mode",
		command: o.command("codemode"),
		header:  []string{"agent", "model turns", "request tokens (all turns)", "wall time (median run)"},
		rows: [][]string{
			{"direct: one call a turn", strconv.Itoa(direct.turns), strconv.Itoa(direct.tokens), ms(direct.wall)},
			{"code mode: one run_code", strconv.Itoa(code.turns), strconv.Itoa(code.tokens), ms(code.wall)},
			{"code mode against direct", fmt.Sprintf("%+d", code.turns-direct.turns), fewer(float64(code.tokens), float64(direct.tokens)), fmt.Sprintf("%+.2f ms", float64((code.wall-direct.wall).Microseconds())/1e3)},
		},
		notes: []string{
			fmt.Sprintf("agent.Agent.Run with a scripted model that answers at once, over %d tools of one server of testdata/toolcatalog, each answering %d bytes of text the task needs only the length of. Direct: the model sees the %d tools and calls one a turn (each call needs the one before), then answers. Code mode: the model sees run_code, describe_api and search_api, the system prompt carries the tools' TypeScript declaration (as agent --code-mode's does when it fits), and one run_code program makes the %d calls and returns {bytes}. Request tokens: every request's JSON body (system prompt, tools, conversation) counted in o200k_base and summed. Wall time: median of %d runs, in process (no network, no model latency: a real model's turns cost seconds each).", taskCalls, taskResultBytes, taskCalls, taskCalls, o.taskRuns()),
		},
	}
}

// taskRuns is how many runs the task row times.
func (o options) taskRuns() int {
	if o.smoke {
		return taskSmokeRuns
	}
	return taskRuns
}
