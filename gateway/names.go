package gateway

import (
	"cmp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// listing is one registry tool as the gateway serves it.
type listing struct {
	served string    // the name clients see
	tool   tool.Tool // the registry's tool (called by its public Name)
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
		out = append(out, listing{served: name, tool: t})
	}
	return out, lost
}

// rawName is the name t has at its source, or its public name for a tool
// written in Go.
func rawName(t tool.Tool) string {
	return cmp.Or(t.Origin.Name, t.Name)
}
