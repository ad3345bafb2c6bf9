package toolsearch

import "slices"

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

// servers maps the terms of the server names to the servers they name.
type servers struct {
	byTerm map[int32][]int32 // term id → server ids
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
	for _, t := range b.intern([]string{name}) {
		if !slices.Contains(b.x.servers.byTerm[t], id) {
			b.x.servers.byTerm[t] = append(b.x.servers.byTerm[t], id)
		}
	}
	b.x.servers.count = len(ids)
	return id
}

// named returns the servers that concepts name: a variant of a concept
// (the word itself, an alias or a completion, so "mongo" names mongodb)
// is a word of their name. Nil when the boost is off.
func (x *Index) named(concepts []concept) []int32 {
	if !x.cfg.expand || x.servers.count == 0 {
		return nil
	}
	var out []int32
	for _, c := range concepts {
		for _, v := range c.variants {
			ss := x.servers.byTerm[v.id]
			if float64(len(ss)) > maxNamedShare*float64(x.servers.count) {
				continue
			}
			for _, s := range ss {
				if !slices.Contains(out, s) {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// boostNamed multiplies the scores of the named servers' tools.
func (x *Index) boostNamed(s *scores, named []int32) {
	if len(named) == 0 {
		return
	}
	for _, d := range s.touched {
		if slices.Contains(named, x.docs[d].server) {
			s.total[d] *= serverBoost
		}
	}
}
