package toolsearch

import (
	"flag"
	"fmt"
	"strings"
	"testing"
)

var explainQuery = flag.String("explain", "", "print how New ranks the catalog for this query (TestExplain)")

// TestExplain prints, for -explain QUERY, each top tool's score by query
// concept: a tuning aid, skipped otherwise.
func TestExplain(t *testing.T) {
	if *explainQuery == "" {
		t.Skip("no -explain query")
	}
	idx := New(catalog())
	t.Log(explain(idx, *explainQuery, 8))
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
