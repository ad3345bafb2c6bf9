package mcppeer_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
)

// The catalog has thirty servers with several tools each; a tool answers
// with its server's and its own name and counts the call.
func TestCatalog(t *testing.T) {
	servers := mcppeer.Catalog()
	total := 0
	for _, s := range servers {
		total += len(s.Tools)
	}
	if len(servers) != 30 || total < 120 {
		t.Fatalf("%d servers, %d tools", len(servers), total)
	}
	gitlab := servers[0]
	for _, s := range servers {
		if s.Name == "gitlab" {
			gitlab = s
		}
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := gitlab.Server.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_issue", Arguments: map[string]any{"title": "x"}})
	if err != nil || len(res.Content) != 1 || !strings.HasPrefix(res.Content[0].(*mcp.TextContent).Text, `gitlab/create_issue {"title":"x"}`) || gitlab.Calls() != 1 {
		t.Errorf("call: %v %+v, %d calls", err, res, gitlab.Calls())
	}
}
