package toolview

import (
	"context"
	"sync"

	"github.com/mcpbridge/mcpbridge/tool"
)

// Session is one model's own part of a view, for a server with many
// clients (a gateway keeps one per client session): its own loaded and
// shown tools over the view's config, search state and index. A
// search_tools call whose context carries the session (Bind) loads into it
// rather than into the View's own model.
type Session struct {
	reg     *tool.Registry
	current func() *View

	mu    sync.Mutex
	sel   selection
	grown bool // a search loaded a tool Tools had not returned yet
}

// NewSession returns a session over the view current returns at each use,
// so that it follows a tool-search entry through config reloads (pass
// internal/kinds/view's Kind.View). While current returns nil (no tool-search entry)
// the session sees reg's whole catalog; what it loaded stays for when a
// view comes back.
func NewSession(reg *tool.Registry, current func() *View) *Session {
	return &Session{reg: reg, current: current, sel: newSelection()}
}

// NewSession returns a session over v alone.
func (v *View) NewSession() *Session {
	return NewSession(v.reg, func() *View { return v })
}

// Tools returns the tools the session's model sees now, as View.Tools
// does for the View's own model.
func (s *Session) Tools() ([]tool.Tool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.current()
	if v == nil {
		return s.reg.List(), nil
	}
	return v.toolsFor(&s.sel)
}

// Bind returns ctx carrying the session: search_tools run with it (through
// Registry.Execute) loads its matches into the session.
func (s *Session) Bind(ctx context.Context) context.Context {
	return context.WithValue(ctx, sessionKey{}, s)
}

// Grown reports whether a search loaded a tool the session had not been
// shown since the last call, and forgets it: the caller then tells its
// client that the list changed.
func (s *Session) Grown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.grown
	s.grown = false
	return g
}

// Loaded returns the names search_tools has loaded into the session,
// sorted.
func (s *Session) Loaded() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sel.names()
}

// search is View.Search of v loading into the session.
func (s *Session) search(v *View, query string, limit int, allowed func(string) bool) ([]Found, error) {
	found, grew, err := v.searchFor(&s.sel, &s.mu, query, limit, allowed)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.grown = s.grown || grew
	return found, err
}

// sessionKey carries a *Session in a context.
type sessionKey struct{}
