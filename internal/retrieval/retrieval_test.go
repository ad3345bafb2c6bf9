package retrieval

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/mcpbridge/mcpbridge/toolsearch"
)

var verbose = flag.Bool("per-query", false, "log each query's ranks (TestRankerBeatsBaseline)")

func load(t *testing.T) (*Catalog, []Query) {
	t.Helper()
	dir := filepath.Join("..", "..", "testdata", "toolcatalog")
	cat, err := LoadCatalog(filepath.Join(dir, "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	qs, err := LoadQueries(filepath.Join(dir, "queries.tsv"), cat)
	if err != nil {
		t.Fatal(err)
	}
	return cat, qs
}

// On the real catalog, the ranker beats plain BM25 by the margin
// (recall@5 by at least 5 points, recall@1 strictly), on all queries and
// on the held-out ones alone, whichever word analysis BM25 is given.
func TestRankerBeatsBaseline(t *testing.T) {
	cat, qs := load(t)
	tools := cat.Tools()
	ranker := toolsearch.New(tools)
	baselines := []struct {
		name string
		idx  *toolsearch.Index
	}{{"BM25", toolsearch.NewBaseline(tools)}, {"raw BM25", toolsearch.NewRawBaseline(tools)}}
	if *verbose {
		logRanks(t, qs, ranker, baselines[0].idx)
	}
	for _, split := range []string{"", Tune, Held} {
		set := qs
		if split != "" {
			set = Of(qs, split)
		}
		r := Evaluate(ranker, set)
		t.Logf("%-4s %3d queries: ranker R@1 %.3f R@5 %.3f MRR@10 %.3f", split, r.Queries, r.Recall1, r.Recall5, r.MRR10)
		for _, base := range baselines {
			b := Evaluate(base.idx, set)
			t.Logf("%-4s %3d queries: %-8s R@1 %.3f R@5 %.3f MRR@10 %.3f", split, b.Queries, base.name, b.Recall1, b.Recall5, b.MRR10)
			if split == Tune {
				continue // the whole set and the held-out part decide
			}
			if r.Recall5 < b.Recall5+0.05 || r.Recall1 <= b.Recall1 {
				t.Errorf("%q queries: ranker recall@1 %.3f, recall@5 %.3f; %s %.3f, %.3f: want recall@5 ≥ %[4]s + 0.05 and recall@1 > %[4]s",
					split, r.Recall1, r.Recall5, base.name, b.Recall1, b.Recall5)
			}
		}
	}
}

// logRanks logs the queries that either index does not answer first.
func logRanks(t *testing.T, qs []Query, ranker, base *toolsearch.Index) {
	for _, q := range qs {
		rr, br := Rank(ranker.Search(q.Text, Depth), q.Want), Rank(base.Search(q.Text, Depth), q.Want)
		if rr != 1 || br != 1 {
			t.Logf("%s %-70q ranker %2d baseline %2d  %v", q.Split, q.Text, rr, br, ranker.Search(q.Text, 3))
		}
	}
}
