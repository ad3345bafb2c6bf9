package resourcetools_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpbridge/mcpbridge/resourcetools"
	"github.com/mcpbridge/mcpbridge/tool"
)

// A harness that hands a model the registry's tools follows the registry
// so that the model can list and read the servers' resources too: the
// two tools are there while some server offers resources.
func ExampleFollow() {
	reg := tool.NewRegistry()
	f := resourcetools.Follow(reg)
	defer f.Stop()

	src := reg.NewSource()
	defer src.Close()
	read := func(_ context.Context, uri string) (tool.ReadResult, error) {
		return tool.ReadResult{Content: []tool.Content{tool.Text("# Notes")},
			Wire: json.RawMessage(`{"contents":[{"uri":"` + uri + `","text":"# Notes"}]}`)}, nil
	}
	_ = src.PublishOffer(tool.Offer{Server: "docs", Resources: []tool.Resource{{URI: "file:///notes.md", Name: "notes"}}, Read: read})
	f.Refresh() // the watch would do it a moment later

	for _, t := range reg.List() {
		fmt.Println(t.Name)
	}
	res, err := reg.Execute(context.Background(), resourcetools.ReadName, json.RawMessage(`{"server":"docs","uri":"file:///notes.md"}`))
	fmt.Println(res.Text(), err)
	// Output:
	// list_mcp_resources
	// read_mcp_resource
	// # Notes <nil>
}
