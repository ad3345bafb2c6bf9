package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpbridge/mcpbridge/tool"
	"github.com/mcpbridge/mcpbridge/toolsearch"
)

// The tools a consumer lists in code mode instead of the tools themselves
// (docs/codemode.md).
const (
	SearchName   = "search_api"
	DescribeName = "describe_api"
	RunName      = "run_code"
)

// Search limits of search_api: the default and the most.
const (
	defaultSearchLimit = 5
	maxSearchLimit     = 20
)

// Tools returns search_api, describe_api and run_code over view, for a
// gateway or an agent to list in place of view's tools. Each reads view's
// tools when it runs, so they follow the catalog; run_code runs a program
// with Run and opts (opts.API is ignored: the API is the view's of the
// moment), in the context of its own call, so the caller's identity
// reaches every inner call.
func Tools(view View, opts Options) []tool.Tool {
	opts.API = nil
	c := &codeTools{view: view, opts: opts}
	return []tool.Tool{
		{
			Name: SearchName,
			Description: "Search the tools API by what you want to do, in plain words (\"create a GitHub issue\"). " +
				"Returns the TypeScript declaration of the best matching functions, to call from run_code.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"query":{"type":"string","description":"What the function should do, in plain words."},` +
				`"limit":{"type":"integer","minimum":1,"maximum":20,"description":"How many functions to return (default 5)."}},` +
				`"required":["query"],"additionalProperties":false}`),
			Annotations: json.RawMessage(`{"readOnlyHint":true}`),
			Execute:     c.search,
		},
		{
			Name: DescribeName,
			Description: "Describe the tools API as TypeScript. Without a namespace: the namespaces, one line each. " +
				"With one: the declaration of its functions, to call from run_code as tools.<namespace>.<function>(args).",
			InputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"namespace":{"type":"string","description":"A namespace from the list; leave out for the list."}},` +
				`"additionalProperties":false}`),
			Annotations: json.RawMessage(`{"readOnlyHint":true}`),
			Execute:     c.describe,
		},
		{
			Name: RunName,
			Description: "Run a JavaScript program against the tools API and return what it returns and logs. " +
				"The program is the body of an async function: call tools.<namespace>.<function>(args) or tools.call(name, args) " +
				"(each returns a Promise of {text, structured, isError, content}), await them (Promise.all runs calls at once), " +
				"filter and combine the results, console.log what helps, and return a small JSON value. " +
				"Plain JavaScript: no type annotations, no imports, no timers (await sleep(ms) waits).",
			InputSchema: json.RawMessage(`{"type":"object","properties":{` +
				`"code":{"type":"string","description":"The program."}},` +
				`"required":["code"],"additionalProperties":false}`),
			Execute: c.run,
		},
	}
}

// codeTools are the bodies of Tools.
type codeTools struct {
	view View
	opts Options
}

// api returns the view's API now, as ctx's caller sees it.
func (c *codeTools) api(ctx context.Context) (*API, error) {
	tools, err := toolsOf(ctx, c.view)
	if err != nil {
		return nil, fmt.Errorf("list the tools: %w", err)
	}
	return NewAPI(tools), nil
}

func (c *codeTools) search(ctx context.Context, args json.RawMessage) (tool.Output, error) {
	var in struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return tool.Output{}, fmt.Errorf("invalid arguments: %w", err)
	}
	if in.Query == "" {
		return tool.Output{}, errors.New(`"query" is empty: say what the function should do`)
	}
	if len(in.Query) > toolsearch.MaxQueryBytes {
		return tool.Output{}, fmt.Errorf(`"query" is %d bytes: say what the function should do in a sentence or two (at most %d bytes)`, len(in.Query), toolsearch.MaxQueryBytes)
	}
	limit := min(max(in.Limit, 0), maxSearchLimit)
	if limit == 0 {
		limit = defaultSearchLimit
	}
	tools, err := toolsOf(ctx, c.view)
	if err != nil {
		return tool.Output{}, fmt.Errorf("list the tools: %w", err)
	}
	var names []string
	for _, m := range toolsearch.New(tools).Search(in.Query, limit) {
		names = append(names, m.Name)
	}
	if len(names) == 0 {
		return text("// No function matches; try other words, or describe_api for the namespaces."), nil
	}
	return text(NewAPI(tools).Declare(names...)), nil
}

func (c *codeTools) describe(ctx context.Context, args json.RawMessage) (tool.Output, error) {
	var in struct {
		Namespace string `json:"namespace"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return tool.Output{}, fmt.Errorf("invalid arguments: %w", err)
	}
	api, err := c.api(ctx)
	if err != nil {
		return tool.Output{}, err
	}
	if in.Namespace == "" {
		return text(api.Namespaces()), nil
	}
	decl, err := api.Namespace(in.Namespace)
	if err != nil {
		return tool.Output{}, err
	}
	return text(decl), nil
}

func (c *codeTools) run(ctx context.Context, args json.RawMessage) (tool.Output, error) {
	var in struct {
		Code string `json:"code"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return tool.Output{}, fmt.Errorf("invalid arguments: %w", err)
	}
	if in.Code == "" {
		return tool.Output{}, errors.New(`"code" is empty: give the program to run`)
	}
	res, err := Run(ctx, c.view, in.Code, c.opts)
	if err != nil {
		if logged := res.Text(); logged != "" {
			return tool.Output{}, fmt.Errorf("%w\nlogged before it failed:\n%s", err, logged)
		}
		return tool.Output{}, err
	}
	value, err := json.Marshal(res)
	if err != nil {
		return tool.Output{}, err // untested: a Result is JSON
	}
	return tool.Output{Content: []tool.Content{tool.Text(res.Text())}, Value: value}, nil
}

// text is an output of one text block.
func text(s string) tool.Output { return tool.Output{Content: []tool.Content{tool.Text(s)}} }
