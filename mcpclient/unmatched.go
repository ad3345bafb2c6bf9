package mcpclient

import (
	"slices"
	"sync"

	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
)

// unmatchedNames are the enabledTools and disabledTools names warned about
// as matching no tool of the server, so that each is warned about once per
// entry: not again at a re-list, a reconnect, or in a share: session
// instance (which shares its entry's).
type unmatchedNames struct {
	mu     sync.Mutex
	warned map[toolFilterName]bool
}

type toolFilterName struct{ key, name string }

// first records key's name and reports whether it was not yet.
func (u *unmatchedNames) first(key, name string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	k := toolFilterName{key, name}
	if u.warned[k] {
		return false
	}
	if u.warned == nil {
		u.warned = map[toolFilterName]bool{}
	}
	u.warned[k] = true
	return true
}

// warnUnmatched warns about each enabledTools or disabledTools name that
// matches none of the tools the server listed (listed, every page's), with
// the closest listed name: a typo would otherwise hide the tool meant, or
// leave it exposed, without a word. A server listing no tools has nothing
// to compare with yet.
func (s *Server) warnUnmatched(listed []string) {
	if len(listed) == 0 {
		return
	}
	for _, f := range s.cfg.toolFilters() {
		for _, name := range f.names {
			if slices.Contains(listed, name) || !s.opts.unmatched.first(f.key, name) {
				continue
			}
			args := []any{"tool", name}
			if near := yamlconf.Suggest(name, listed); near != "" {
				args = append(args, "did_you_mean", near)
			}
			s.log.Warn(f.unmatched, args...)
		}
	}
}
