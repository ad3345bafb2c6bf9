package sdkwire

import (
	"bytes"
	"context"
	"encoding/base64"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Assumption 42: a list page's nextCursor names its last item's unique
// id, readable by anyone, and a page asked with PageCursor(uid) starts
// past uid, whether or not an item has it, as the SDK's own cursor does.
func TestContractPageCursor(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, &mcp.ServerOptions{PageSize: 1})
	for _, name := range []string{"a", "c", "e"} {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	}
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	first, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ cursor, want string }{{first.NextCursor, "c"}, {PageCursor("a"), "c"}, {PageCursor("b"), "c"}, {PageCursor("c"), "e"}} {
		page, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: c.cursor})
		if err != nil || len(page.Tools) != 1 || page.Tools[0].Name != c.want {
			t.Errorf("the page of cursor %q: %+v, %v; want tool %s", c.cursor, page, err, c.want)
		}
	}
	if raw, _ := base64.URLEncoding.DecodeString(first.NextCursor); !bytes.HasSuffix(raw, []byte("\x01a\x00")) {
		t.Errorf("the first page's cursor %q does not end naming its last tool, a", raw)
	}
}
