package toolview_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpbridge/mcpbridge/tool"
	"github.com/mcpbridge/mcpbridge/toolview"
)

// With search on, the model sees search_tools and the pinned tools; a
// search loads what it finds into the view.
func ExampleView() {
	reg := tool.NewRegistry()
	src := reg.NewSource()
	defer src.Close()
	noop := func(context.Context, json.RawMessage) (tool.Output, error) { return tool.Output{}, nil }
	var tools []tool.Tool
	for _, name := range []string{"create_issue", "list_issues", "now"} {
		server := "github"
		if name == "now" {
			server = "time"
		}
		tools = append(tools, tool.Tool{Name: "mcp__" + server + "__" + name, Origin: tool.Origin{Server: server, Name: name},
			Description: name, InputSchema: json.RawMessage(`{"type":"object"}`), Execute: noop})
	}
	if err := src.Publish(tools...); err != nil {
		fmt.Println(err)
		return
	}
	v, err := toolview.New(reg, toolview.Config{Mode: toolview.ModeOn, Pinned: []string{"mcp__time__*"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer v.Close()
	show := func() {
		seen, _ := v.Tools()
		var names []string
		for _, t := range seen {
			names = append(names, t.Name)
		}
		fmt.Println(strings.Join(names, " "))
	}
	show()
	found, _ := v.Search("create issue", 1)
	fmt.Println(found[0].Name)
	show()
	// Output:
	// mcp__time__now search_tools
	// mcp__github__create_issue
	// mcp__github__create_issue mcp__time__now search_tools
}
