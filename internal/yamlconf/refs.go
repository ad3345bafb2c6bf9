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

// NamedVars are the variables a field that names one (apiKeyEnv, a
// token's variable) names as written in n: its value when that is a
// name, else the references it holds, as apiKeyEnv: ${NAME}, invalid,
// still says that NAME holds the key.
func NamedVars(n *yaml.Node) []string {
	if n = Resolve(n); n == nil || n.Kind != yaml.ScalarNode {
		return nil
	}
	if IsVarName(n.Value) {
		return []string{n.Value}
	}
	return Refs(n.Value)
}

// URLCredentialRefs returns the variables the URL s references where a
// URL carries credentials: its userinfo (redis://:${PASS}@host), its
// query (?key=${KEY}) or fragment, with those of their defaults
// (${PASS:-${OLD_PASS}}); every one when they make up its scheme or host
// (url: ${SERVER_URL}), which may hold either. Variables of its host or
// path alone are none.
func URLCredentialRefs(s string) []string {
	marked, refs, ok := markRefs(s)
	u, err := url.Parse(marked)
	if !ok || err != nil || u.Host == "" || strings.Contains(u.Scheme, refMark) {
		return Refs(s)
	}
	secret := u.User.String() + "?" + u.RawQuery + "#" + u.Fragment
	var out []string
	for i, ref := range refs {
		if !strings.Contains(secret, markOf(i)) {
			continue
		}
		for _, name := range Refs(ref) {
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

// refMark starts the text markRefs puts in place of a reference: letters
// and digits, which a URL keeps as they are wherever they stand.
const refMark = "mcpbridgeref"

func markOf(i int) string { return refMark + strconv.Itoa(i) + "x" }

// markRefs returns s with each reference that is not in another's
// default replaced by markOf its index in refs, which holds it whole,
// defaults and all; ok is false when one is not closed.
func markRefs(s string) (marked string, refs []string, ok bool) {
	x := &expander{s: s}
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$$"):
			b.WriteString("$$")
			i += 2
		case strings.HasPrefix(s[i:], "${"):
			end, closed := x.closing(i)
			if !closed {
				return "", nil, false
			}
			b.WriteString(markOf(len(refs)))
			refs = append(refs, s[i:end])
			i = end
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String(), refs, true
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
