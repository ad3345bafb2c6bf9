package mcppeer

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// catalogJSON is thirty servers' tool lists, modelled on widely used MCP
// servers (look-alikes included: GitHub and GitLab, Playwright and
// Puppeteer, Slack and Discord, three SQL databases, four issue
// trackers): {"server": [[name, description, {param: description}]]}.
//
//go:embed catalog.json
var catalogJSON []byte

// CatalogServer is one server of [Catalog]: a go-sdk server whose tools
// answer "<server>/<tool> <arguments>" and count their calls.
type CatalogServer struct {
	Name   string
	Server *mcp.Server
	Tools  []string // raw names, in the catalog's order
	calls  atomic.Int64
}

// Calls returns how many tool calls the server has answered.
func (s *CatalogServer) Calls() int64 { return s.calls.Load() }

// Catalog returns thirty servers with realistic tool lists, by name.
func Catalog() []*CatalogServer {
	var defs map[string][][3]json.RawMessage
	if err := json.Unmarshal(catalogJSON, &defs); err != nil {
		panic(fmt.Sprintf("mcppeer: catalog.json: %v", err)) // embedded, tested
	}
	var out []*CatalogServer
	for _, name := range slices.Sorted(maps.Keys(defs)) {
		s := &CatalogServer{Name: name, Server: mcp.NewServer(&mcp.Implementation{Name: name, Version: "1.0.0"}, nil)}
		for _, d := range defs[name] {
			s.addTool(d)
		}
		out = append(out, s)
	}
	return out
}

// addTool adds one [name, description, params] definition.
func (s *CatalogServer) addTool(d [3]json.RawMessage) {
	var name, desc string
	var params map[string]string
	if json.Unmarshal(d[0], &name) != nil || json.Unmarshal(d[1], &desc) != nil || json.Unmarshal(d[2], &params) != nil {
		panic(fmt.Sprintf("mcppeer: catalog.json: server %s: bad tool %s", s.Name, d[0]))
	}
	props := map[string]any{}
	for p, pd := range params {
		props[p] = map[string]string{"type": "string", "description": pd}
	}
	schema, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
	s.Tools = append(s.Tools, name)
	s.Server.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(schema)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.calls.Add(1)
			return textResult(s.Name + "/" + name + " " + string(req.Params.Arguments)), nil
		})
}
