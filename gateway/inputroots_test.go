package gateway

import (
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// A 2026-07-28 backend that asks for roots in an input-required result
// (the go-sdk everything-server's test_input_required_result_list_roots)
// gets the roots its entry says: with roots: client, those of the
// gateway's client that made the call, put to it as an input request;
// with roots: [paths], the entry's own, whatever the client offers. The
// gateway used to answer both from the entry (none for roots: client).
func TestInputRequiredRootsReachClient(t *testing.T) {
	server := buildEverythingServer(t)
	dir := t.TempDir()
	reg := tool.NewRegistry()
	for name, cfg := range map[string]mcpclient.Config{
		"client": {RootsFromClient: true},
		"paths":  {Roots: []string{dir}},
	} {
		cfg.ServerName, cfg.Transport, cfg.Command = name, mcpclient.TransportStdio, server
		startClient(t, cfg, mcpclient.Options{Registry: reg, Elicit: true})
	}
	base := serveHTTP(t, newGateway(t, reg, Options{Stateless: true}), Options{Stateless: true})

	a := &answering{}
	c := a.client()
	c.AddRoots(&mcp.Root{URI: "file:///clients/project", Name: "project"})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ProtocolVersion; got != "2026-07-28" {
		t.Fatalf("negotiated %q, want 2026-07-28", got)
	}
	own := (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
	for name, want := range map[string]string{
		"client": "Client exposed 1 root(s): file:///clients/project",
		"paths":  "Client exposed 1 root(s): " + own,
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__" + name + "__test_input_required_result_list_roots", Arguments: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := strings.Join(texts(res), "\n"); res.IsError || got != want {
			t.Errorf("roots of entry %q: got %q (isError %v), want %q", name, got, res.IsError, want)
		}
	}
}
