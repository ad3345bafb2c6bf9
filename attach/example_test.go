package attach_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpbridge/mcpbridge/attach"
	"github.com/mcpbridge/mcpbridge/tool"
)

// memory is a harness's own attachment store: it keeps each attachment
// and names it by number.
type memory struct{ kept []attach.Attachment }

func (m *memory) Put(_ context.Context, a attach.Attachment) (string, error) {
	m.kept = append(m.kept, a)
	return fmt.Sprintf("attachment #%d", len(m.kept)), nil
}

// A harness with its own store gets a result's text with each image
// stored and named in place of the model view's diagnostic; the result's
// value keeps the raw block.
func ExampleText() {
	// An image result as the registry returns it from an MCP server.
	res := tool.Result{
		Content: []tool.Content{tool.Text("A chart:"), tool.Text("[image unavailable: image/png; no attachment store is mounted; raw image data remains available to programmatic callers]")},
		Value:   json.RawMessage(`{"content":[{"type":"text","text":"A chart:"},{"type":"image","mimeType":"image/png","data":"iVBORw0KGgo="}]}`),
	}
	store := &memory{}
	fmt.Println(attach.Text(context.Background(), store, res))
	fmt.Println(store.kept[0].Kind, store.kept[0].MediaType, len(store.kept[0].Data), "bytes")
	// Output:
	// A chart:
	// [image saved: attachment #1 (image/png, 8 B)]
	// image image/png 8 bytes
}
