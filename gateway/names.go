package gateway

import (
	"cmp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// listing is one registry tool as the gateway serves it.
type listing struct {
	served string    // the name clients see
	tool   tool.Tool // the registry's tool (called by its public Name)
	// unsafeRaw is the tool's raw name when it was not served under it
	// (see safeName).
	unsafeRaw string
}

// shadowed is a tool not served because another server's tool took its
// raw name first.
type shadowed struct {
	tool, server, keptBy string
}

// listings decides the names the gateway serves tools under: their public
// names, or with raw their source's own names (tool.Origin.Name), where a
// raw name offered by two servers goes to the server first in order
// (servers not in order come after, by name) and the other is shadowed.
// tools is in registry order (by public name); so is the result.
func listings(tools []tool.Tool, raw bool, order []string) ([]listing, []shadowed) {
	out := make([]listing, 0, len(tools))
	if !raw {
		for _, t := range tools {
			out = append(out, listing{served: t.Name, tool: t})
		}
		return out, nil
	}
	prec := tool.ByPrecedence(order)
	byName := map[string]tool.Tool{}
	for _, t := range tools {
		name := rawName(t)
		kept, taken := byName[name]
		if !taken || cmp.Or(prec(t.Origin.Server, kept.Origin.Server), cmp.Compare(t.Name, kept.Name)) < 0 {
			byName[name] = t
		}
	}
	var lost []shadowed
	for _, t := range tools {
		name := rawName(t)
		if kept := byName[name]; kept.Name != t.Name {
			lost = append(lost, shadowed{tool: name, server: t.Origin.Server, keptBy: kept.Origin.Server})
			continue
		}
		l := listing{served: name, tool: t}
		if name == t.Name && t.Origin.Name != "" && t.Origin.Name != t.Name {
			l.unsafeRaw = t.Origin.Name
		}
		out = append(out, l)
	}
	return out, lost
}

// rawName is the name t has at its source, or its public name for a tool
// written in Go or whose raw name is not safeName.
func rawName(t tool.Tool) string {
	if !safeName(t.Origin.Name) {
		return t.Name
	}
	return t.Origin.Name
}

// safeName reports whether name is non-empty and made of [A-Za-z0-9_.-]
// only, the characters the MCP specification recommends for tool names. A
// server's own name is shown to clients and models as is: control
// characters, bidirectional overrides or zero-width characters in it could
// hide what a tool is.
func safeName(name string) bool {
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return name != ""
}
