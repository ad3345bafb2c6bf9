//lint:file-ignore SA1019 the test server asks for roots, deprecated as of MCP 2026-07-28 but carried by the bridge.

package mcpclient

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rootsServer is a go-sdk server whose tool "roots" asks its client for
// roots in the middle of the call and answers the URIs it got, as JSON.
func rootsServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "roots", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "roots", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, err
			}
			uris := []string{}
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			b, _ := json.Marshal(uris)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
		})
	return srv
}

// An entry without roots is offered none, even from the working directory
// / (it used to be offered that directory). The server asks within the
// call, so what it gets does not depend on when it asks.
func TestRootsOfferedDuringCall(t *testing.T) {
	t.Chdir("/")
	for _, c := range []struct {
		name  string
		roots []string
		want  []string
	}{
		{"roots absent", nil, []string{}},
		{"no roots", []string{}, []string{}},
		{"the working directory, asked for", []string{"."}, []string{"file:///"}},
		{"a path", []string{"/tmp"}, []string{"file:///tmp"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := stdioConfig("r")
			cfg.ProtocolVersion, cfg.Roots = "2025-11-25", c.roots
			h := mustStart(t, cfg, Options{NewTransport: inMemory(t, rootsServer())})
			res := h.call("mcp__r__roots", `{}`)
			var got []string
			if res.IsError || json.Unmarshal([]byte(res.Text()), &got) != nil {
				t.Fatalf("roots: %s", res.Text())
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("offered %q, want %q", got, c.want)
			}
		})
	}
}
