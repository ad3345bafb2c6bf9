package codemode_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/codemode"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// mathServer is an in-memory MCP server with one tool that answers
// structured content and an image block.
func mathServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "math", Version: "1"}, nil)
	type in struct {
		A float64 `json:"a" jsonschema:"the first number"`
		B float64 `json:"b" jsonschema:"the second number"`
	}
	type out struct {
		Product float64 `json:"product"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "multiply", Description: "Multiplies two numbers."},
		func(_ context.Context, _ *mcp.CallToolRequest, args in) (*mcp.CallToolResult, out, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "done"},
				&mcp.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png"},
			}}, out{Product: args.A * args.B}, nil
		})
	return srv
}

// TestRunAgainstAnMCPServer runs a program over a real MCP server bridged
// into a registry: the declaration has its schema, and a call's result
// carries its structured content and every content block.
func TestRunAgainstAnMCPServer(t *testing.T) {
	srv := mathServer()
	reg := tool.NewRegistry()
	var sessions []*mcp.ServerSession
	bridge, err := mcpclient.Start(mcpclient.Config{ServerName: "math", Transport: mcpclient.TransportStdio, Command: "unused"}, mcpclient.Options{
		Registry: reg,
		NewTransport: func() (mcp.Transport, error) {
			ct, st := mcp.NewInMemoryTransports()
			ss, err := srv.Connect(context.Background(), st, nil)
			sessions = append(sessions, ss)
			return ct, err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		bridge.Close()
		for _, ss := range sessions {
			ss.Close()
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := bridge.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	decl := codemode.NewAPI(reg.List()).Declaration()
	want := "    function multiply(args: {\n      /** the first number */\n      a: number;"
	if !strings.Contains(decl, want) || !strings.Contains(decl, "Promise<ToolResult<{\n      product: number;") {
		t.Errorf("declaration lacks the server's schemas:\n%s", decl)
	}
	res, err := codemode.Run(ctx, codemode.RegistryView(reg),
		`const r = await tools.math.multiply({a: 6, b: 7}); return [r.structured.product, r.content.map(c => c.type), r.content[1].mimeType, r.isError]`,
		codemode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Value); got != `[42,["text","image"],"image/png",false]` {
		t.Errorf("value = %s", got)
	}
}
