package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/mcpbridge/mcpbridge/codemode"
	"github.com/mcpbridge/mcpbridge/internal/retrieval"
	"github.com/mcpbridge/mcpbridge/tokens"
	"github.com/mcpbridge/mcpbridge/tool"
)

// codemodeResults are what the code mode rows measured.
type codemodeResults struct {
	tools, namespaces int
	// Tokens (o200k_base) of the catalog as JSON Schemas, as the whole
	// declaration, as the namespaces page, and of one namespace's
	// declaration (median and largest).
	schemaTokens, fullTokens, pageTokens int
	nsMedian, nsLargest                  float64
	largestNS                            string
	// Per call: a direct Registry.Execute, and an inner call of a program
	// making calls in sequence; a whole Run of one call.
	direct, inner, oneRun time.Duration
	calls                 int
	// The six-call task run by the agent, direct and in code mode.
	taskDirect, taskCode taskResult
}

// runCodemode measures the declaration's tokens on the 312-tool catalog
// and the cost of an inner call against a direct one.
func runCodemode(root string, o options, logf func(string, ...any)) (*codemodeResults, error) {
	cat, err := retrieval.LoadCatalog(filepath.Join(root, "testdata", "toolcatalog", "catalog.json"))
	if err != nil {
		return nil, err
	}
	res := &codemodeResults{tools: cat.Len(), calls: o.codemodeCalls}
	if err := res.countTokens(cat.Tools()); err != nil {
		return nil, err
	}
	logf("codemode: declaration tokens counted")
	if err := res.timeCalls(o.codemodeCalls, o.rounds); err != nil {
		return nil, err
	}
	logf("codemode: inner calls timed")
	six, err := taskTools(cat.Tools())
	if err != nil {
		return nil, err
	}
	if res.taskDirect, err = runTask(six, false, o.taskRuns()); err != nil {
		return nil, err
	}
	if res.taskCode, err = runTask(six, true, o.taskRuns()); err != nil {
		return nil, err
	}
	logf("codemode: the six-call task run")
	return res, nil
}

// countTokens counts the catalog's descriptions.
func (res *codemodeResults) countTokens(tools []tool.Tool) error {
	var err error
	if res.schemaTokens, err = tokens.Total(tools); err != nil {
		return err
	}
	api := codemode.NewAPI(tools)
	if res.fullTokens, err = tokens.Count(api.Declaration()); err != nil {
		return err
	}
	if res.pageTokens, err = tokens.Count(api.Namespaces()); err != nil {
		return err
	}
	var per []float64
	for _, ns := range api.Names() {
		decl, err := api.Namespace(ns)
		if err != nil {
			return err
		}
		n, err := tokens.Count(decl)
		if err != nil {
			return err
		}
		per = append(per, float64(n))
		if float64(n) > res.nsLargest {
			res.nsLargest, res.largestNS = float64(n), ns
		}
	}
	res.namespaces, res.nsMedian = len(per), median(per)
	return nil
}

// timeCalls times n calls of a Go tool, directly and from a program, in
// interleaved rounds (the median round counts), and a program of one call.
func (res *codemodeResults) timeCalls(n, rounds int) error {
	reg := tool.NewRegistry()
	add := func(_ context.Context, args json.RawMessage) (tool.Output, error) {
		return tool.Output{Content: []tool.Content{tool.Text(strconv.Itoa(len(args)))}}, nil
	}
	if _, err := reg.Register(tool.Tool{Name: "mcp__calc__add", Origin: tool.Origin{Server: "calc", Name: "add"}, Execute: add}); err != nil {
		return err
	}
	view := codemode.RegistryView(reg)
	ctx := context.Background()
	program := fmt.Sprintf("for (let i = 0; i < %d; i++) { await tools.calc.add({a: i, b: 1}) }", n)
	opts := codemode.Options{MaxCalls: n, Timeout: time.Hour}
	var direct, inner, one []time.Duration
	for range rounds {
		runtime.GC()
		start := time.Now()
		for i := range n {
			if _, err := reg.Execute(ctx, "mcp__calc__add", json.RawMessage(`{"a":`+strconv.Itoa(i)+`,"b":1}`)); err != nil {
				return err
			}
		}
		direct = append(direct, time.Since(start)/time.Duration(n))
		runtime.GC()
		start = time.Now()
		if _, err := codemode.Run(ctx, view, program, opts); err != nil {
			return err
		}
		inner = append(inner, time.Since(start)/time.Duration(n))
		start = time.Now()
		if _, err := codemode.Run(ctx, view, "return (await tools.calc.add({a: 1, b: 1})).text", opts); err != nil {
			return err
		}
		one = append(one, time.Since(start))
	}
	res.direct, res.inner, res.oneRun = medianDur(direct), medianDur(inner), medianDur(one)
	return nil
}

func codemodeTables(o options, r *codemodeResults) []table {
	tok := table{
		title:   "Code mode: tokens to describe the catalog",
		command: o.command("codemode"),
		header:  []string{"description", "tokens (o200k_base)", "vs JSON Schemas"},
		notes: []string{
			fmt.Sprintf("The %d tools of testdata/toolcatalog (%d namespaces). JSON Schemas: the tool definitions as a chat-completions request carries them (tokens.Total, as the search rows count them). Declaration: codemode.NewAPI(tools).Declaration(), the TypeScript a model reads in code mode; namespaces page: Namespaces(), the first page of a progressive description (one line per namespace); one namespace: Namespace(name), what describe_api answers next.", r.tools, r.namespaces),
		},
		rows: [][]string{
			{"JSON Schemas (tool definitions)", strconv.Itoa(r.schemaTokens), "–"},
			{"TypeScript declaration, whole", strconv.Itoa(r.fullTokens), fewer(float64(r.fullTokens), float64(r.schemaTokens))},
			{"namespaces page (progressive, first page)", strconv.Itoa(r.pageTokens), fewer(float64(r.pageTokens), float64(r.schemaTokens))},
			{"one namespace's declaration (median)", fmt.Sprintf("%.0f", r.nsMedian), fewer(r.nsMedian, float64(r.schemaTokens))},
			{"one namespace's declaration (largest: " + r.largestNS + ")", fmt.Sprintf("%.0f", r.nsLargest), fewer(r.nsLargest, float64(r.schemaTokens))},
		},
	}
	calls := table{
		title:   "Code mode: cost of an inner call",
		command: o.command("codemode"),
		header:  []string{"call", "per call (median round)", "vs direct"},
		notes: []string{
			fmt.Sprintf("A Go tool in a tool.Registry, %d calls a round, %d rounds interleaved, in this process. Direct: Registry.Execute in a loop. Inner: one codemode.Run of a program awaiting the same calls one after another, divided by the calls: the program runs in a process of its own, so each call crosses a pipe each way (asked as a JSON line, made here through the registry, answered as one), its promise settled on the program's loop. One program: a whole Run of a one-call program (its process started, sandbox set-up, compile, call, result, exit).", r.calls, o.rounds),
		},
		rows: [][]string{
			{"direct registry call", fmtDur(r.direct), "–"},
			{"inner call of a program", fmtDur(r.inner), fmt.Sprintf("+%s", fmtDur(r.inner-r.direct))},
			{"a program of one call (whole Run)", fmtDur(r.oneRun), fmt.Sprintf("+%s", fmtDur(r.oneRun-r.direct))},
		},
	}
	return []table{tok, calls, taskTable(o, r.taskDirect, r.taskCode)}
}
