package projection_test

import (
	"encoding/json"
	"fmt"

	"github.com/mcpbridge/mcpbridge/internal/projection"
)

func ExampleProject() {
	raw := json.RawMessage(`{"content":[{"type":"text","text":"a"},{"type":"image","mimeType":"image/png","data":"AQ=="},{"type":"video"}],"structuredContent":{"n":12345678901234567890}}`)
	res, err := projection.Project(raw, projection.Options{RawName: "snap"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%q\n", res.Blocks)
	fmt.Println(string(res.Value))
	// Output:
	// ["a" "[image unavailable: image/png; no attachment store is mounted; raw image data remains available to programmatic callers]" "[unsupported MCP content type: video]"]
	// {"content":[{"type":"text","text":"a"},{"type":"image","mimeType":"image/png","data":"AQ=="},{"type":"video"}],"structuredContent":{"n":12345678901234567890}}
}
