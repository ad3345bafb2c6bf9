package retrieval

import (
	"slices"

	"github.com/mcpbridge/mcpbridge/toolsearch"
)

// Depth is how deep MRR looks, and how many results a query asks for.
const Depth = 10

// Scores are a ranking's results on a set of queries, each in [0, 1].
type Scores struct {
	Queries int
	Recall1 float64 // share of queries with an answer first
	Recall5 float64 // … among the first five
	MRR10   float64 // mean of 1/rank of the first answer, 0 below rank 10
}

// Rank returns the 1-based rank of the first of want in ms, 0 when absent.
func Rank(ms []toolsearch.Match, want []string) int {
	for i, m := range ms {
		if slices.Contains(want, m.Name) {
			return i + 1
		}
	}
	return 0
}

// Evaluate scores idx on qs.
func Evaluate(idx *toolsearch.Index, qs []Query) Scores {
	s := Scores{Queries: len(qs)}
	if len(qs) == 0 {
		return s
	}
	for _, q := range qs {
		r := Rank(idx.Search(q.Text, Depth), q.Want)
		if r == 0 {
			continue
		}
		s.MRR10 += 1 / float64(r)
		if r <= 5 {
			s.Recall5++
		}
		if r == 1 {
			s.Recall1++
		}
	}
	n := float64(len(qs))
	s.Recall1, s.Recall5, s.MRR10 = s.Recall1/n, s.Recall5/n, s.MRR10/n
	return s
}
