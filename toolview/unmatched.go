package toolview

import (
	"path"
	"slices"
	"strings"

	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
	"github.com/mcpbridge/mcpbridge/tool"
)

// Unmatched is a pinned name or glob of a Config that matches no tool of
// the server it names.
type Unmatched struct {
	Pinned string // as written
	Server string // the server it names (mcp__<server>__…)
	// Nearest is the server's tool name closest to Pinned, "" when none
	// is close (or Pinned is a glob).
	Nearest string
}

// Unmatched returns the pinned names and globs of the view's config that
// match no tool while the server they name (mcp__<server>__…) has tools
// in the registry: a typo, which would otherwise leave the tool hidden
// without a word. Each is checked once, when its server's tools are first
// there (a server publishes them all at once); one whose server has none
// yet waits for them, and one naming no server (a Go tool's) is never
// checked.
func (v *View) Unmatched() []Unmatched {
	pending := v.unchecked()
	if len(pending) == 0 {
		return nil // every pin checked: no need to list the catalog
	}
	// Listed and compared outside the view's lock, which every tools/list
	// of its sessions waits on.
	catalog := v.reg.List()
	var out []Unmatched
	var found []string
	for _, p := range pending {
		server := serverNamed(p, catalog)
		if server == "" {
			continue // its server has no tools yet
		}
		found = append(found, p)
		if !slices.ContainsFunc(catalog, func(t tool.Tool) bool { return matches(p, t.Name) }) {
			out = append(out, Unmatched{Pinned: p, Server: server, Nearest: nearest(p, server, catalog)})
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	out = slices.DeleteFunc(out, func(u Unmatched) bool { return v.checked[u.Pinned] }) // told by a call meanwhile
	for _, p := range found {
		v.checked[p] = true
	}
	return out
}

// unchecked returns the pins Unmatched has still to check: those not
// checked yet that name a server (mcp__<server>__…); one that names none
// (a Go tool's, a glob such as *__search) is never checked.
func (v *View) unchecked() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []string
	for _, p := range v.cfg.Pinned {
		if !v.checked[p] && strings.HasPrefix(p, "mcp__") {
			out = append(out, p)
		}
	}
	return out
}

// matches reports whether the pinned name or glob p matches name.
func matches(p, name string) bool {
	ok, _ := path.Match(p, name) // patterns were checked by New
	return ok
}

// serverNamed returns the server of catalog that p names by its public
// names' prefix (mcp__<server>__), the longest when several do; "" when
// none does.
func serverNamed(p string, catalog []tool.Tool) string {
	best := ""
	for _, t := range catalog {
		s := t.Origin.Server
		if prefix := "mcp__" + s + "__"; s != "" && len(s) > len(best) && strings.HasPrefix(t.Name, prefix) && strings.HasPrefix(p, prefix) {
			best = s
		}
	}
	return best
}

// nearest returns the tool name of server closest to the pinned name p,
// "" when none is close or p is a glob.
func nearest(p, server string, catalog []tool.Tool) string {
	if strings.ContainsAny(p, `*?[\`) {
		return ""
	}
	var names []string
	for _, t := range catalog {
		if t.Origin.Server == server {
			names = append(names, t.Name)
		}
	}
	return yamlconf.Suggest(p, names)
}
