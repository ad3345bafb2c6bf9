package toolsearch

import (
	"slices"
	"strings"
)

// A request that names a server ("… on GitLab", "with puppeteer", "in
// mongo") nearly always wants one of that server's tools, however many
// other tools share its verbs and nouns. BM25F alone weighs the name by
// how rare it is, and a server's name is common among its own tools, so
// a tool of another server that matches the other words better can still
// come first. New therefore multiplies the score of every tool of a
// named server by serverBoost.
const serverBoost = 1.5

// maxNamedShare: a word in the names of more than this share of the
// servers ("server", "mcp") names none of them.
const maxNamedShare = 0.5

// minServerPrefix is the shortest beginning of a server's name that names
// it: "mongo" names mongodb, but "git" names neither github nor gitlab.
const minServerPrefix = 4

// servers maps the terms of the server names to the servers they name.
type servers struct {
	byTerm map[string][]int32 // term → server ids
	count  int
}

// addServer records the server of doc, interning its name; it returns
// the server's id.
func (b *builder) addServer(ids map[string]int32, name string) int32 {
	if id, ok := ids[name]; ok {
		return id
	}
	id := int32(len(ids))
	ids[name] = id
	for _, t := range b.a.appendTerms(nil, name) {
		if !slices.Contains(b.x.servers.byTerm[t], id) {
			b.x.servers.byTerm[t] = append(b.x.servers.byTerm[t], id)
		}
	}
	b.x.servers.count = len(ids)
	return id
}

// named returns the servers that the query terms name: a term, or one of
// its aliases, is a word of their name or the beginning of one ("mongo"
// names mongodb, "k8s" kubernetes). Nil when the boost is off.
func (x *Index) named(concepts []concept) []int32 {
	if !x.cfg.expand || x.servers.count == 0 {
		return nil
	}
	var out []int32
	for st, ss := range x.servers.byTerm {
		if float64(len(ss)) > maxNamedShare*float64(x.servers.count) || !namedBy(st, concepts) {
			continue
		}
		for _, s := range ss {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// namedBy reports whether a query term names the server-name term st.
func namedBy(st string, concepts []concept) bool {
	for _, c := range concepts {
		t := c.term
		if t == st || (len(t) >= minServerPrefix && strings.HasPrefix(st, t)) || slices.Contains(aliases[t], st) {
			return true
		}
	}
	return false
}

// boostNamed multiplies the scores of the named servers' tools.
func (x *Index) boostNamed(s *scores, named []int32) {
	if len(named) == 0 {
		return
	}
	is := make([]bool, x.servers.count)
	for _, id := range named {
		is[id] = true
	}
	for _, d := range s.touched {
		if is[x.docs[d].server] {
			s.total[d] *= serverBoost
		}
	}
}
