package yamlconf

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Refs returns the variables s references, those in a default too, each
// once, in order.
func Refs(s string) []string {
	var names []string
	expand(s, func(name string) (string, bool) {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
		return "", true
	})
	return names
}

// NodeRefs is Refs of every string under n: a scalar, or the values (not
// the keys) of a mapping or a list.
func NodeRefs(n *yaml.Node) []string {
	n = Resolve(n)
	if n == nil {
		return nil
	}
	if n.Kind == yaml.ScalarNode {
		return Refs(n.Value)
	}
	var names []string
	for i, c := range n.Content {
		if n.Kind == yaml.MappingNode && i%2 == 0 {
			continue
		}
		for _, name := range NodeRefs(c) {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	return names
}

// URLCredentialRefs returns the variables the URL s references where a
// URL carries credentials: its userinfo (redis://:${PASS}@host), its
// query (?key=${KEY}) or fragment; every one when they make up its
// scheme or host (url: ${SERVER_URL}), which may hold either. Variables
// of its host or path alone are none.
func URLCredentialRefs(s string) []string {
	names := Refs(s)
	mark := func(i int) string { return "mcpbridgeref" + strconv.Itoa(i) + "x" }
	marked, _ := expand(s, func(name string) (string, bool) { return mark(slices.Index(names, name)), true })
	u, err := url.Parse(marked)
	if err != nil || u.Host == "" || strings.Contains(u.Scheme, "mcpbridgeref") {
		return names
	}
	secret := u.User.String() + "?" + u.RawQuery + "#" + u.Fragment
	var out []string
	for i, name := range names {
		if strings.Contains(secret, mark(i)) {
			out = append(out, name)
		}
	}
	return out
}

// Child returns the value at keys below the mapping n (nil when there is
// none).
func Child(n *yaml.Node, keys ...string) *yaml.Node {
	n = Resolve(n)
	for _, k := range keys {
		if n == nil {
			return nil
		}
		n = child(n, k, -1)
	}
	return n
}
