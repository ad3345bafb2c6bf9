// Package retrieval is the tool-search retrieval benchmark: a catalog of
// real MCP servers' tool lists (testdata/toolcatalog/catalog.json,
// captured by scripts/capture-tool-catalog.sh), requests written the way
// users ask with the tools that answer them (queries.tsv), and the
// metrics that score a ranking on them (recall@k, MRR@10).
package retrieval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/mcpbridge/mcpbridge/internal/naming"
	"github.com/mcpbridge/mcpbridge/tool"
)

// Catalog is a snapshot of MCP servers' tool lists and where it came from.
type Catalog struct {
	Source  Source   `json:"source"`
	Servers []Server `json:"servers"`
}

// Source says how a catalog was captured.
type Source struct {
	Command  string `json:"command"`  // what reproduces it
	Captured string `json:"captured"` // when, RFC 3339 UTC
	Node     string `json:"node"`     // the Node version that ran the servers
	Note     string `json:"note"`
}

// Server is one server's tool list.
type Server struct {
	Name    string `json:"name"`    // its serverName in the bridge
	Package string `json:"package"` // npm package@version
	Tools   []Tool `json:"tools"`
}

// Tool is one tool as the server listed it.
type Tool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// LoadCatalog reads a catalog file.
func LoadCatalog(path string) (*Catalog, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Catalog
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(c.Servers) == 0 {
		return nil, fmt.Errorf("%s: no servers", path)
	}
	return &c, nil
}

// Len returns the number of tools of the catalog.
func (c *Catalog) Len() int {
	n := 0
	for _, s := range c.Servers {
		n += len(s.Tools)
	}
	return n
}

// Tools returns the catalog's tools as the bridge registers them: public
// name mcp__<server>__<tool>, Origin set, the schema compact (the bytes a
// server sends), and a body that answers nothing.
func (c *Catalog) Tools() []tool.Tool {
	return c.Replicas(1)
}

// Replicas returns n copies of the catalog's tools, the servers of copy i
// > 0 renamed <name>-<i>: a catalog n times as large with distinct server
// names, for measuring at scale.
func (c *Catalog) Replicas(n int) []tool.Tool {
	out := make([]tool.Tool, 0, n*c.Len())
	for i := range n {
		for _, s := range c.Servers {
			server := s.Name
			if i > 0 {
				server = fmt.Sprintf("%s-%d", s.Name, i)
			}
			for _, t := range s.Tools {
				out = append(out, t.bridged(server))
			}
		}
	}
	return out
}

func (t Tool) bridged(server string) tool.Tool {
	var schema bytes.Buffer
	if err := json.Compact(&schema, t.InputSchema); err != nil {
		schema.Reset()
		schema.Write(t.InputSchema) // untested: a captured schema is valid JSON
	}
	return tool.Tool{
		Name:        naming.Public(server, t.Name),
		Title:       t.Title,
		Description: t.Description,
		InputSchema: schema.Bytes(),
		Origin:      tool.Origin{Server: server, Name: t.Name},
		Execute:     noop,
	}
}

func noop(context.Context, json.RawMessage) (tool.Output, error) {
	return tool.Output{}, nil
}
