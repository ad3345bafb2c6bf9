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

// maxOtherShare: a word of a request that more than this share of the
// other servers' tools use is a common word, not a name, even where it is
// (the beginning of) a word of a server's name: "search" does not name
// brave-search, nor "file" filesystem.
const maxOtherShare = 0.05

// minServerPrefix is the shortest beginning of a server's name that names
// it: "mongo" names mongodb, but "git" names neither github nor gitlab.
const minServerPrefix = 4

// servers maps the terms of the server names to the servers they name.
type servers struct {
	byTerm map[string][]int32 // term → server ids
	count  int
	tools  []int // by server id: its number of tools
}

// addServer records the server of doc, interning its name; it returns
// the server's id.
func (b *builder) addServer(ids map[string]int32, name string) int32 {
	if id, ok := ids[name]; ok {
		return id
	}
	id := int32(len(ids))
	ids[name] = id
	b.x.servers.tools = append(b.x.servers.tools, 0)
	for _, t := range b.a.appendTerms(nil, name) {
		if !slices.Contains(b.x.servers.byTerm[t], id) {
			b.x.servers.byTerm[t] = append(b.x.servers.byTerm[t], id)
		}
	}
	b.x.servers.count = len(ids)
	return id
}

// named returns the servers that the query's words name: a word, or one
// of its aliases, is a word of their name or the beginning of one
// ("mongo" names mongodb, "k8s" kubernetes), and it is not a common word
// in the other servers' tools. Nil when the boost is off.
func (x *Index) named(concepts []concept) []int32 {
	if !x.cfg.expand || x.servers.count == 0 {
		return nil
	}
	var out []int32
	for st, ss := range x.servers.byTerm {
		if float64(len(ss)) > maxNamedShare*float64(x.servers.count) || !x.namedBy(st, ss, concepts) {
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

// namedBy reports whether a query word names the server-name word st of
// the servers ss.
func (x *Index) namedBy(st string, ss []int32, concepts []concept) bool {
	for _, c := range concepts {
		t := c.term
		names := t == st || (len(t) >= minServerPrefix && strings.HasPrefix(st, t)) || slices.Contains(aliases[t], st)
		if names && !x.commonElsewhere(t, ss) {
			return true
		}
	}
	return false
}

// commonElsewhere reports whether more than maxOtherShare of the tools
// outside the servers ss use the word t.
func (x *Index) commonElsewhere(t string, ss []int32) bool {
	id, ok := x.terms[t]
	if !ok {
		return false
	}
	others := len(x.docs)
	in := make([]bool, x.servers.count)
	for _, s := range ss {
		others -= x.servers.tools[s]
		in[s] = true
	}
	uses := 0
	for _, p := range x.postings[id] {
		if !in[x.docs[p.doc].server] {
			uses++
		}
	}
	return others > 0 && float64(uses) > maxOtherShare*float64(others)
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
