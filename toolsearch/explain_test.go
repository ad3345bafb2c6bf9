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

// TestExplain checks the tuning aid on a request of the test catalog:
// the concepts of the request, then the top tools with each concept's
// share of their score. With -explain QUERY it prints that query's
// explanation instead (and -explain-catalog ranks a retrieval catalog).
func TestExplain(t *testing.T) {
	if *explainQuery != "" {
		tools := catalog()
		if *explainCatalog != "" {
			tools = loadCatalog(t, *explainCatalog)
		}
		t.Log(explain(New(tools), *explainQuery, 8))
		return
	}
	out := explain(New(catalog()), "open a ticket in our GitLab project", 3)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var ranked []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "concept ") {
			ranked = append(ranked, l)
		}
	}
	if len(ranked) != 3 || !strings.HasPrefix(ranked[0], "mcp__gitlab__create_issue ") || !strings.Contains(ranked[0], " gitlab=") {
		t.Errorf("explain: want mcp__gitlab__create_issue first with a gitlab share, got:\n%s", out)
	}
	if !strings.Contains(out, "concept ") {
		t.Errorf("explain lists no concept:\n%s", out)
	}
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

// loadCatalog reads a retrieval catalog's tools (the internal/retrieval
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
