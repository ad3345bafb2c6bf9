package tool

import (
	"cmp"
	"slices"
)

// ByPrecedence orders server names for consumers that must pick one of
// several servers offering the same thing: the servers in order first (a
// config's order), in that order, then the others by name.
func ByPrecedence(order []string) func(a, b string) int {
	rank := func(server string) int {
		if i := slices.Index(order, server); i >= 0 {
			return i
		}
		return len(order)
	}
	return func(a, b string) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a, b))
	}
}

// Shadowed is something a server offers that another server, first by
// precedence, offers too: consumers that aggregate by key serve KeptBy's.
type Shadowed struct {
	// Kind is "resource" or "resource template".
	Kind string
	// Key is the URI or URI template.
	Key            string
	Server, KeptBy string
}

// ShadowedResources lists the resources (by URI) and templates (by URI
// template) that more than one server offers, each server but the first
// by ByPrecedence(order) once.
func (r *Registry) ShadowedResources(order []string) []Shadowed {
	prec := ByPrecedence(order)
	var out []Shadowed
	add := func(kind string, keys map[string][]string) {
		for key, servers := range keys {
			slices.SortFunc(servers, prec)
			for _, s := range servers[1:] {
				out = append(out, Shadowed{Kind: kind, Key: key, Server: s, KeptBy: servers[0]})
			}
		}
	}
	res, tpl := map[string][]string{}, map[string][]string{}
	for _, x := range r.Resources() {
		res[x.URI] = append(res[x.URI], x.Server)
	}
	for _, x := range r.ResourceTemplates() {
		tpl[x.URITemplate] = append(tpl[x.URITemplate], x.Server)
	}
	add("resource", res)
	add("resource template", tpl)
	slices.SortFunc(out, func(a, b Shadowed) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Key, b.Key), prec(a.Server, b.Server))
	})
	return out
}
