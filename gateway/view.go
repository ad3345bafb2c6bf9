package gateway

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/tool"
)

// View is one client session's part of the catalog, for deferred loading
// (Options.NewView): package toolview's Session implements it. The
// gateway defines the interface so that it depends on the registry alone.
//
// A session with a view lists only what its view shows. Its tools/call
// requests run with the view bound to their context, so the registry's
// search tool (search_tools) loads its matches into that session's view;
// when a call grew the view, the gateway sends
// notifications/tools/list_changed to that session (and not to the
// others), and its next tools/list has the new tools. Every tool stays
// callable by its served name whether the session lists it or not: hiding
// a tool saves the model's context, it is not access control, and a
// client that learned a name from a search result may call it at once
// (with Options.RawNames, by the raw name: search results carry public
// names).
type View interface {
	// Tools returns the registry tools the session lists now.
	Tools() ([]tool.Tool, error)
	// Bind returns ctx carrying the view, for the registry's search tool.
	Bind(ctx context.Context) context.Context
	// Grown reports whether a call grew the view since the last Grown,
	// and forgets it.
	Grown() bool
}

// viewState is what the client sessions' views (each kept in its
// session's state) are told; the zero value is ready.
type viewState struct {
	// epoch counts the syncs with the registry, bumped as each starts and
	// as it ends: a session told before a bump is owed the next tools
	// list_changed. (The SDK sends it at least 10 ms after the sync's last
	// change, after the closing bump; the opening one covers a
	// list_changed of a search that goes out while the sync runs.)
	epoch atomic.Uint64
}

// sessionView is one session's view and what the session was told.
type sessionView struct {
	view View // nil: the session lists every tool

	mu    sync.Mutex
	grown bool   // a call grew the view: list_changed owed
	seen  uint64 // the epoch of the last list_changed the session got
}

// callView returns the view a call req binds: its session's, or for a
// call with only its request a fresh one, as the SDK's path makes for the
// one-request session of a stateless POST (forgotten with it).
func (g *Gateway) callView(req callRequest) *sessionView {
	if !req.oneRequest {
		return g.viewOf(req.session)
	}
	if g.opts.NewView == nil {
		return nil
	}
	return &sessionView{view: g.opts.NewView(), seen: g.views.epoch.Load() &^ 1}
}

// viewOf returns ss's view, made on its first request (nil when
// Options.NewView is unset); a session served without state (a
// one-request session) has one of its own for its one request.
func (g *Gateway) viewOf(ss *mcp.ServerSession) *sessionView {
	if g.opts.NewView == nil || ss == nil {
		return nil
	}
	g.mu.Lock()
	st := g.stateLocked(ss)
	if st != nil && st.view != nil {
		defer g.mu.Unlock()
		return st.view
	}
	g.mu.Unlock()
	// Told of nothing yet: its first tools/list is current. Made without
	// g.mu held: NewView is the caller's code.
	sv := &sessionView{view: g.opts.NewView(), seen: g.views.epoch.Load() &^ 1}
	if st == nil {
		return sv
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if st.view == nil {
		st.view = sv
	}
	return st.view
}

// viewMiddleware narrows tools/list to the session's view. (A tools/call
// binds the view in serveCall.)
func (g *Gateway) viewMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/list" {
			return next(ctx, method, req)
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		sv := g.viewOf(ss)
		res, err := next(ctx, method, req)
		if list, ok := res.(*mcp.ListToolsResult); ok && err == nil && sv != nil && sv.view != nil {
			g.narrow(list, sv.view)
		}
		return res, err
	}
}

// noteGrowth owes sv's session a tools list_changed when the call of
// the tool served as name grew its view, and sends it.
func (g *Gateway) noteGrowth(sv *sessionView, name string) {
	if !sv.view.Grown() {
		return
	}
	sv.mu.Lock()
	sv.grown = true
	sv.mu.Unlock()
	g.announceGrowth(name)
}

// narrow keeps in list the tools view shows (a view shows registry tools
// only, so as many as the registry has is all of them). A view that fails
// leaves the list whole (and says so in the log): the client keeps
// working.
func (g *Gateway) narrow(list *mcp.ListToolsResult, view View) {
	tools, err := view.Tools()
	if err != nil {
		g.log.Warn("tools/list: the session's view failed; listing every tool", "err", err)
		return
	}
	if len(tools) == g.reg.Len() {
		return // the whole catalog (no tool search): nothing to narrow
	}
	shown := make(map[string]bool, len(tools))
	for _, t := range tools {
		shown[t.Name] = true
	}
	kept := make([]*mcp.Tool, 0, len(list.Tools))
	g.syncMu.Lock()
	for _, t := range list.Tools {
		if shown[g.advertised[t.Name].public] {
			kept = append(kept, t)
		}
	}
	g.syncMu.Unlock()
	list.Tools = kept
}

// announceGrowth makes the SDK send list_changed, by listing again the
// tool served as name (the search tool just called) as the registry has
// it; the sending middleware lets it through to the sessions owed one
// only. A tool gone or changed meanwhile needs nothing: the sync that
// follows sends list_changed to every session.
func (g *Gateway) announceGrowth(name string) {
	g.syncMu.Lock()
	defer g.syncMu.Unlock()
	ad, listed := g.advertised[name]
	t, ok := g.reg.Get(ad.public)
	if !listed || !ad.ok || !ok {
		return
	}
	if err := g.addTool(name, t); err != nil {
		g.log.Warn("list_changed not sent", "tool", name, "err", err)
	}
}

// sendingMiddleware drops what a session is not to receive
// (sdkwire.DropNotification): notifications/tools/list_changed when it
// is owed none, a resource's update its caller may no longer see.
func (g *Gateway) sendingMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch {
		case method == sdkwire.ToolListChanged && !g.owesToolsChanged(req.GetSession()):
			return sdkwire.DropNotification()
		case method == resourceUpdated && !g.mayUpdate(req):
			return sdkwire.DropNotification()
		}
		return next(ctx, method, req)
	}
}

// owesToolsChanged reports whether s is owed a tools list_changed now:
// a session without a view always is; one with a view when a call grew
// it or the registry changed since it was last told.
func (g *Gateway) owesToolsChanged(s mcp.Session) bool {
	ss, _ := s.(*mcp.ServerSession)
	var sv *sessionView
	g.mu.Lock()
	if st := g.stateLocked(ss); st != nil {
		sv = st.view
	}
	g.mu.Unlock()
	if sv == nil || sv.view == nil {
		return true
	}
	epoch := g.views.epoch.Load()
	sv.mu.Lock()
	defer sv.mu.Unlock()
	owed := sv.grown || sv.seen < epoch
	sv.grown, sv.seen = false, epoch
	if epoch%2 == 1 {
		// A sync is running: its changes may come after this notice, so
		// the session is still owed the one that follows the sync.
		sv.seen = epoch - 1
	}
	return owed
}
