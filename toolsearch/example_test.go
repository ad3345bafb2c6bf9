package toolsearch_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpbridge/mcpbridge/tool"
	"github.com/mcpbridge/mcpbridge/toolsearch"
)

func Example() {
	noop := func(context.Context, json.RawMessage) (tool.Output, error) { return tool.Output{}, nil }
	reg := tool.NewRegistry()
	_, err := reg.Register(
		tool.Tool{Name: "mcp__github__create_issue", Description: "Create a new issue in a GitHub repository.", Execute: noop},
		tool.Tool{Name: "mcp__gitlab__create_issue", Description: "Create a new issue in a GitLab project.", Execute: noop},
		tool.Tool{Name: "mcp__fs__read_file", Description: "Read the complete contents of a file.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`), Execute: noop},
	)
	if err != nil {
		panic(err)
	}
	// Index once (again after each change of the registry), query many times.
	idx := toolsearch.New(reg.List())
	for _, query := range []string{"open a ticket on gitlab", "show me what's in notes.txt"} {
		for _, m := range idx.Search(query, 1) {
			fmt.Printf("%s: %s\n", query, m.Name)
		}
	}
	// Output:
	// open a ticket on gitlab: mcp__gitlab__create_issue
	// show me what's in notes.txt: mcp__fs__read_file
}
