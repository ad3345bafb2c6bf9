package toolsearch

import (
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/mcpbridge/mcpbridge/tool"
)

// Match is one tool that a query matched, as Search returns it.
type Match struct {
	Name        string  `json:"name"`        // the tool's public name
	Score       float64 `json:"score"`       // > 0; comparable within one query only
	Description string  `json:"description"` // the tool's description, as registered
}

// Index is a search index over a fixed catalog of tools. It is immutable
// once built and safe for concurrent use; to follow a registry that
// changes, build a new one (see New).
type Index struct {
	cfg      *config
	docs     []doc
	terms    map[string]int32 // term → id
	postings [][]posting      // by term id, each sorted by doc
	byText   []int32          // term ids sorted by term, for prefix look-ups
	vocab    []string         // by term id
	servers  servers          // which words name which servers
	scratch  sync.Pool        // *scores
}

type doc struct {
	name, description string
	server            int32 // id in servers
}

// posting is one tool that contains a term, with the term's BM25F pseudo
// frequency in it: the sum over fields of weight × occurrences, each
// divided by the field's length normalisation.
type posting struct {
	doc int32
	tf  float32
}

// New indexes tools for Search. Building costs about as much as
// tokenizing every tool's text once (a few milliseconds for a few hundred
// tools), so a consumer may simply rebuild after every change of its
// registry. The index keeps the tools' names and descriptions, not the
// tools; their order does not matter.
func New(tools []tool.Tool) *Index { return build(tools, &rankerConfig) }

// NewBaseline indexes tools for plain BM25 (k1 = 1.2, b = 0.75) over one
// bag of words per tool (its public name, description and parameter names)
// with New's stop words and stems, camel-case words split only, and
// without fields, phrases, aliases, prefix matching, literals or server
// boosts: the reference for measuring what New's additions buy.
func NewBaseline(tools []tool.Tool) *Index { return build(tools, &baselineConfig) }

// NewRawBaseline is NewBaseline on words as written: lower-cased runs of
// letters and digits, without camel-case splits, stop words or stems,
// the textbook BM25 that a retrieval library gives by default.
func NewRawBaseline(tools []tool.Tool) *Index { return build(tools, &rawBaselineConfig) }

// MaxQueryBytes is the longest query a tool searching for a model should
// take: a request for a tool is a sentence or two, while analysing a query
// costs in proportion to its length (a megabyte, a second of CPU), and a
// gateway's client may send a call of megabytes.
const MaxQueryBytes = 4 << 10

// Search returns the k tools that match query best, best first; k <= 0
// returns every tool that matches. A tool matches when it shares at least
// one term with the query (after stemming, and for New also through an
// alias or as a prefix); a query of stop words alone matches nothing.
// Equal scores sort by name.
func (x *Index) Search(query string, k int) []Match {
	concepts := x.concepts(query)
	if len(concepts) == 0 || len(x.docs) == 0 {
		return nil
	}
	s, _ := x.scratch.Get().(*scores)
	if s == nil {
		s = &scores{total: make([]float64, len(x.docs)), concept: make([]float64, len(x.docs))}
	}
	for _, c := range concepts {
		x.scoreConcept(c, s)
	}
	x.boostNamed(s, x.named(concepts))
	top := x.top(s, k)
	for _, d := range s.touched {
		s.total[d] = 0
	}
	s.touched = s.touched[:0]
	x.scratch.Put(s)

	out := make([]Match, len(top))
	for i, c := range top {
		d := x.docs[c.doc]
		out[i] = Match{Name: d.name, Score: c.score, Description: d.description}
	}
	return out
}

// Len returns the number of tools in the index.
func (x *Index) Len() int { return len(x.docs) }

// scores is the scratch space of one query, pooled: a dense score per
// tool, and which tools have one.
type scores struct {
	total   []float64 // by doc: the sum over concepts
	concept []float64 // by doc: the current concept's frequency
	touched []int32   // docs with total > 0
	inConc  []int32   // docs with concept > 0
}

// variant is one term a query concept matches, with its weight: 1 for the
// query's own term, less for an alias or a completion.
type variant struct {
	id     int32
	weight float64
}

// concept is one distinct term of a query: the index terms it matches,
// and how much it counts.
type concept struct {
	term     string // the query's own term
	variants []variant
	boost    float64
}

// concepts analyzes query into its distinct terms, each with the index
// terms it may match. A request to a tool usually starts with its verb
// ("commit my staged changes", "open a PR to merge …"), the word that
// tells tools that work on the same things apart, so with expansion on
// the query's first term counts firstTermBoost times.
func (x *Index) concepts(query string) []concept {
	a := analyzer{raw: x.cfg.raw, camel: x.cfg.camel(camelWhole), phrases: x.cfg.phrases}
	var out []concept
	if x.cfg.expand {
		query = replaceLiterals(query)
	}
	terms := a.appendTerms(nil, query)
	seen := make(map[string]bool, len(terms))
	for i, t := range terms {
		if seen[t] {
			continue
		}
		seen[t] = true
		c := concept{term: t, variants: x.variants(t), boost: 1}
		if i == 0 && x.cfg.expand {
			c.boost = firstTermBoost
		}
		if len(c.variants) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// variants returns the index terms that the query term t matches.
func (x *Index) variants(t string) []variant {
	var vs []variant
	id, exact := x.terms[t]
	if exact {
		vs = append(vs, variant{id, 1})
	}
	if !x.cfg.expand {
		return vs
	}
	for _, alias := range aliases[t] {
		if id, ok := x.terms[alias]; ok {
			vs = append(vs, variant{id, aliasWeight})
		}
	}
	if !exact {
		for _, id := range x.completions(t) {
			if !slices.ContainsFunc(vs, func(v variant) bool { return v.id == id }) {
				vs = append(vs, variant{id, prefixWeight})
			}
		}
	}
	return vs
}

// completions returns the ids of up to maxCompletions index terms that
// start with t (shortest first), for a query term that is the beginning of
// a word ("auth" for "authentication"); none for a short t.
func (x *Index) completions(t string) []int32 {
	if len(t) < minPrefix {
		return nil
	}
	i, _ := slices.BinarySearchFunc(x.byText, t, func(id int32, t string) int {
		return strings.Compare(x.vocab[id], t)
	})
	var ids []int32
	for ; i < len(x.byText) && len(ids) < maxCandidates; i++ {
		id := x.byText[i]
		if !strings.HasPrefix(x.vocab[id], t) {
			break
		}
		ids = append(ids, id)
	}
	slices.SortStableFunc(ids, func(a, b int32) int { return len(x.vocab[a]) - len(x.vocab[b]) })
	return ids[:min(len(ids), maxCompletions)]
}

// scoreConcept adds to s the BM25F score of one query concept, which
// counts as a single term (as Lucene's SynonymQuery does): its frequency in
// a tool is the weighted sum of its variants' frequencies, saturated once,
// so that a tool that uses several aliases of one word scores about as
// much as one that uses the word; its document frequency is that of its
// most common variant, so that a rare alias is not worth more than the
// word the user wrote.
func (x *Index) scoreConcept(c concept, s *scores) {
	df := 0
	for _, v := range c.variants {
		list := x.postings[v.id]
		df = max(df, len(list))
		for _, p := range list {
			if s.concept[p.doc] == 0 {
				s.inConc = append(s.inConc, p.doc)
			}
			s.concept[p.doc] += v.weight * float64(p.tf)
		}
	}
	k1, idf := x.cfg.k1, c.boost*x.idf(df)
	for _, d := range s.inConc {
		if s.total[d] == 0 {
			s.touched = append(s.touched, d)
		}
		tf := s.concept[d]
		s.total[d] += idf * tf * (k1 + 1) / (tf + k1)
		s.concept[d] = 0
	}
	s.inConc = s.inConc[:0]
}

// idf is BM25's inverse document frequency, always > 0.
func (x *Index) idf(df int) float64 {
	n := float64(len(x.docs))
	return math.Log(1 + (n-float64(df)+0.5)/(float64(df)+0.5))
}

// candidate is a scored tool.
type candidate struct {
	doc   int32
	score float64
}

// top returns the k best candidates of s (all for k <= 0), best first.
func (x *Index) top(s *scores, k int) []candidate {
	if k <= 0 || k > len(s.touched) {
		k = len(s.touched)
	}
	h := make([]candidate, 0, k) // a heap with the worst kept at the root
	for _, d := range s.touched {
		c := candidate{d, s.total[d]}
		switch {
		case len(h) < k:
			h = append(h, c)
			x.siftUp(h, len(h)-1)
		case x.compare(c, h[0]) < 0:
			h[0] = c
			x.siftDown(h, 0)
		}
	}
	slices.SortFunc(h, x.compare)
	return h
}

// compare orders candidates best first: by score, then by name.
func (x *Index) compare(a, b candidate) int {
	switch {
	case a.score > b.score:
		return -1
	case a.score < b.score:
		return 1
	}
	return strings.Compare(x.docs[a.doc].name, x.docs[b.doc].name)
}

// siftUp and siftDown keep h a heap whose root is its worst candidate.
func (x *Index) siftUp(h []candidate, i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if x.compare(h[parent], h[i]) >= 0 {
			return
		}
		h[parent], h[i] = h[i], h[parent]
		i = parent
	}
}

func (x *Index) siftDown(h []candidate, i int) {
	for {
		worst := i
		if l := 2*i + 1; l < len(h) && x.compare(h[l], h[worst]) > 0 {
			worst = l
		}
		if r := 2*i + 2; r < len(h) && x.compare(h[r], h[worst]) > 0 {
			worst = r
		}
		if worst == i {
			return
		}
		h[i], h[worst] = h[worst], h[i]
		i = worst
	}
}
