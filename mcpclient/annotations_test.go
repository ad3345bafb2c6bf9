package mcpclient

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// A tool's title, annotations and origin reach the registry as the server
// sent them, for consumers that serve, rank or rename tools; the entry's
// alwaysLoad marks it.
func TestToolTitleAnnotationsOrigin(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "ann", Version: "1"}, nil)
	readOnly := true
	srv.AddTool(&mcp.Tool{Name: "look", Title: "Look around", InputSchema: map[string]any{"type": "object"},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: readOnly, Title: "Look"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	h := mustStart(t, Config{ServerName: "ann", Transport: TransportStdio, Command: "unused", AlwaysLoad: true}, Options{NewTransport: inMemory(t, srv)})
	got, ok := h.reg.Get("mcp__ann__look")
	if !ok {
		t.Fatal("tool not registered")
	}
	var ann struct {
		ReadOnlyHint bool   `json:"readOnlyHint"`
		Title        string `json:"title"`
	}
	if err := json.Unmarshal(got.Annotations, &ann); err != nil || !ann.ReadOnlyHint || ann.Title != "Look" {
		t.Errorf("annotations %s (%v)", got.Annotations, err)
	}
	if got.Title != "Look around" || got.Origin != (tool.Origin{Server: "ann", Name: "look"}) {
		t.Errorf("title %q, origin %+v", got.Title, got.Origin)
	}
	if !got.AlwaysLoad {
		t.Error("alwaysLoad: true did not mark the tool")
	}
}
