package codemode

import (
	"slices"
	"strconv"
	"strings"
)

// Ident returns name as a JavaScript identifier, the way a program names a
// server or a tool: each character outside [A-Za-z0-9_$] becomes "_", and
// a leading digit is prefixed with "_". The empty name is "_".
func Ident(name string) string {
	if name == "" {
		return "_"
	}
	var b strings.Builder
	if name[0] >= '0' && name[0] <= '9' {
		b.WriteByte('_')
	}
	for _, r := range name {
		if r < 0x80 && isIdentByte(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// LocalNamespace holds the tools that come from no server (tools written
// in Go whose names do not say one).
const LocalNamespace = "local"

// callName is tools.call; a server of that name is served as "call_".
const callName = "call"

// placeOf returns the server of t ("" for none) and the function name of
// t, before collisions are settled: the server is tool.Origin.Server, else
// the one an "mcp__<server>__<tool>" public name carries; the function is
// the tool's own name there.
func placeOf(name, server, raw string) (srv, fn string) {
	rest, isMCP := strings.CutPrefix(name, "mcp__")
	if server == "" && isMCP {
		if s, t, ok := strings.Cut(rest, "__"); ok && s != "" && t != "" {
			server, rest = s, t
		}
	}
	switch {
	case raw != "":
		fn = raw
	case server != "" && isMCP:
		fn = strings.TrimPrefix(rest, server+"__")
	default:
		fn = name
	}
	return server, Ident(fn)
}

// namespaceOf returns the namespace of server before collisions are
// settled: LocalNamespace for none, else its name through Ident.
func namespaceOf(server string) string {
	if server == "" {
		return LocalNamespace
	}
	ns := Ident(server)
	if ns == callName {
		ns += "_"
	}
	return ns
}

// namespaces settles the namespace of each of servers ("" for the tools
// of none; repeats allowed), so that two servers never share one: a
// server whose name is its namespace as is (and the tools of none) keeps
// it, then the others take theirs, or it with the smallest free suffix
// "_2", "_3", …, in the order of their names. The same servers always get
// the same namespaces.
func namespaces(servers []string) map[string]string {
	asIs := func(server string) bool { return server == "" || namespaceOf(server) == server }
	sorted := slices.Compact(slices.Sorted(slices.Values(servers)))
	taken := map[string]bool{}
	out := make(map[string]string, len(sorted))
	for _, first := range []bool{true, false} {
		for _, server := range sorted {
			if asIs(server) == first {
				out[server] = unique(namespaceOf(server), taken)
			}
		}
	}
	return out
}

// unique returns id, or id with the smallest suffix "_2", "_3", … that
// taken does not hold, and records it in taken.
func unique(id string, taken map[string]bool) string {
	out := id
	for i := 2; taken[out]; i++ {
		out = id + "_" + strconv.Itoa(i)
	}
	taken[out] = true
	return out
}
