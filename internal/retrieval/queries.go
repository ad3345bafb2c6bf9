package retrieval

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/mcpbridge/mcpbridge/internal/naming"
)

// The splits of a query file.
const (
	Tune = "tune" // may guide changes to the ranker
	Held = "held" // never tuned on: the honest estimate
)

// Query is one request and the tools that answer it.
type Query struct {
	Split string
	Text  string
	Want  []string // public tool names; any one is a hit
}

// LoadQueries reads a query file: lines "split<TAB>query<TAB>answers",
// answers comma-separated server:tool names of cat's tools; "#" starts a
// comment line. Every answer must be a tool of cat.
func LoadQueries(path string, cat *Catalog) ([]Query, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	known := make(map[string]bool, cat.Len())
	for _, s := range cat.Servers {
		for _, t := range s.Tools {
			known[s.Name+":"+t.Name] = true
		}
	}
	var qs []Query
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#") {
			continue
		}
		q, err := parseQuery(text, known)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		qs = append(qs, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err) // untested: a read error of a local file
	}
	return qs, nil
}

func parseQuery(line string, known map[string]bool) (Query, error) {
	f := strings.Split(line, "\t")
	if len(f) != 3 {
		return Query{}, fmt.Errorf("%d tab-separated fields, want 3 (split, query, answers)", len(f))
	}
	q := Query{Split: f[0], Text: f[1]}
	if q.Split != Tune && q.Split != Held {
		return q, fmt.Errorf("split %q, want %q or %q", q.Split, Tune, Held)
	}
	if strings.TrimSpace(q.Text) == "" {
		return q, fmt.Errorf("empty query")
	}
	for _, a := range strings.Split(f[2], ",") {
		server, name, ok := strings.Cut(a, ":")
		if !ok || !known[a] {
			return q, fmt.Errorf("answer %q is not server:tool of a catalog tool", a)
		}
		q.Want = append(q.Want, naming.Public(server, name))
	}
	return q, nil
}

// Of returns the queries of one split.
func Of(qs []Query, split string) []Query {
	var out []Query
	for _, q := range qs {
		if q.Split == split {
			out = append(out, q)
		}
	}
	return out
}
