package toolsearch

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/tool"
)

var (
	explainQuery   = flag.String("explain", "", "print how New ranks the catalog for this query (TestExplain)")
	explainCatalog = flag.String("explain-catalog", "", "rank this retrieval catalog (testdata/toolcatalog/catalog.json) instead of the test catalog")
)

// TestExplain prints, for -explain QUERY, each top tool's score by query
// concept: a tuning aid, skipped otherwise.
func TestExplain(t *testing.T) {
	if *explainQuery == "" {
		t.Skip("no -explain query")
	}
	tools := catalog()
	if *explainCatalog != "" {
		tools = loadCatalog(t, *explainCatalog)
	}
	t.Log(explain(New(tools), *explainQuery, 8))
}

// explain shows the contribution of each concept of query to the top k.
func explain(x *Index, query string, k int) string {
	var b strings.Builder
	concepts := x.concepts(query)
	for _, c := range concepts {
		var vs []string
		for _, v := range c.variants {
			vs = append(vs, fmt.Sprintf("%s×%.2g(df %d)", x.vocab[v.id], v.weight, len(x.postings[v.id])))
		}
		fmt.Fprintf(&b, "concept %s\n", strings.Join(vs, " "))
	}
	for _, m := range x.Search(query, k) {
		fmt.Fprintf(&b, "%-45s %6.3f:", m.Name, m.Score)
		for _, c := range concepts {
			one := &scores{total: make([]float64, len(x.docs)), concept: make([]float64, len(x.docs))}
			x.scoreConcept(c, one)
			for d, dc := range x.docs {
				if dc.name == m.Name && one.total[d] > 0 {
					fmt.Fprintf(&b, " %s=%.2f", x.vocab[c.variants[0].id], one.total[d])
				}
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// loadCatalog reads a retrieval catalog's tools (the toolsearch/retrieval
// package imports this one, so its loader cannot serve here).
func loadCatalog(t *testing.T, path string) []tool.Tool {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Servers []struct {
			Name  string
			Tools []struct {
				Name, Title, Description string
				InputSchema              json.RawMessage
			}
		}
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	var tools []tool.Tool
	for _, s := range c.Servers {
		for _, x := range s.Tools {
			tools = append(tools, tool.Tool{Name: "mcp__" + s.Name + "__" + x.Name, Title: x.Title, Description: x.Description,
				InputSchema: x.InputSchema, Origin: tool.Origin{Server: s.Name, Name: x.Name}})
		}
	}
	return tools
}
