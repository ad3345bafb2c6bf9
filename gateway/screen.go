package gateway

import (
	"cmp"
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/tool"
)

// Screen is implemented by a Gate that also decides what each client may
// see and use beyond tools/call: the lists a session gets are narrowed to
// what its caller may use, and prompts/get and resources/read pass the
// Gate's Enter like a call (Call.Method says which). Access control, unlike
// a View: a tool the Screen hides is also refused by Enter.
type Screen interface {
	// Screen returns, for one request, whether its caller (by its HTTP
	// headers, nil off HTTP) may see an item of kind: a tool or prompt by
	// public name, a resource or template by its server. It runs on the
	// request's goroutine and must not call the Gateway. The function it
	// returns may be kept and called later, on another goroutine, after
	// the request ended: a subscription's, for each update sent. It is to
	// decide by the policy in force when called.
	Screen(ctx context.Context, header http.Header, session string) func(kind Offer, name string) bool
}

// Offer is the kind of item a Screen decides on.
type Offer int

const (
	OfferTool Offer = iota
	OfferPrompt
	OfferResource
)

// Methods a Gate's Enter sees in Call.Method besides tools/call (whose
// Method is empty).
const (
	MethodGetPrompt    = "prompts/get"
	MethodReadResource = "resources/read"
)

// visibleTo returns what the caller of a request (by its HTTP header, nil
// off HTTP, and its session) may see and use: the Gate's Screen, or
// everything when the Gate has none. Every request that names a tool,
// prompt, resource or server the caller might not see asks it.
func (g *Gateway) visibleTo(ctx context.Context, header http.Header, session string) func(Offer, string) bool {
	if scr, ok := gateAs[Screen](g.gate); ok {
		return scr.Screen(ctx, header, session)
	}
	return func(Offer, string) bool { return true }
}

// visibleToCaller is visibleTo for a request the SDK's session serves.
func (g *Gateway) visibleToCaller(ctx context.Context, req mcp.Request) func(Offer, string) bool {
	var header http.Header
	if ex := req.GetExtra(); ex != nil {
		header = ex.Header
	} else if h, ok := ctx.Value(listenHeaderKey{}).(http.Header); ok {
		header = h // a subscription the SDK makes for a listen
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	return g.visibleTo(ctx, header, sessionID(ss))
}

// listenHeaderKey carries, in the context of a subscriptions/listen, the
// HTTP header of its request: the SDK subscribes to the resources the
// listen names with requests of its own that carry none
// (Server.subscriptionsListen), and the Screen decides for the listen's
// caller, not for the caller of a request without one (stdio's).
type listenHeaderKey struct{}

// withListenHeader returns ctx carrying the header of req, a
// subscriptions/listen, for the subscriptions the SDK makes for it (nil
// off HTTP: the key then says only that they are a listen's).
func withListenHeader(ctx context.Context, req mcp.Request) context.Context {
	var header http.Header
	if ex := req.GetExtra(); ex != nil {
		header = ex.Header
	}
	return context.WithValue(ctx, listenHeaderKey{}, header)
}

// screenMiddleware narrows the lists to what the Screen lets the session
// see. It runs outside viewMiddleware, on the list the view left.
func (g *Gateway) screenMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	if _, ok := gateAs[Screen](g.gate); !ok {
		return next // nothing to narrow: no work per list
	}
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch res.(type) {
		case *mcp.ListToolsResult, *mcp.ListPromptsResult, *mcp.ListResourcesResult, *mcp.ListResourceTemplatesResult:
		default:
			return res, err
		}
		may := g.visibleToCaller(ctx, req)
		for {
			g.screenList(res, may)
			// The SDK's cursor names the page's last item, in base64:
			// the caller's names the last item it got, and a page it
			// gets none of gives way to the next.
			last, cursor := pageEnd(res)
			switch {
			case *cursor == "":
				return res, nil
			case last != "":
				*cursor = sdkwire.PageCursor(last)
				return res, nil
			}
			askPage(req, *cursor)
			if res, err = next(ctx, method, req); err != nil {
				return res, err
			}
		}
	}
}

// pageEnd returns the unique id of the last item of res, a page of a
// list (its name, URI or URI template, as the SDK's cursor names it),
// "" for an empty page, and its cursor.
func pageEnd(res mcp.Result) (last string, cursor *string) {
	switch list := res.(type) {
	case *mcp.ListToolsResult:
		if n := len(list.Tools); n > 0 {
			last = list.Tools[n-1].Name
		}
		return last, &list.NextCursor
	case *mcp.ListPromptsResult:
		if n := len(list.Prompts); n > 0 {
			last = list.Prompts[n-1].Name
		}
		return last, &list.NextCursor
	case *mcp.ListResourcesResult:
		if n := len(list.Resources); n > 0 {
			last = list.Resources[n-1].URI
		}
		return last, &list.NextCursor
	}
	list := res.(*mcp.ListResourceTemplatesResult) // screenMiddleware passes the lists only
	if n := len(list.ResourceTemplates); n > 0 {
		last = list.ResourceTemplates[n-1].URITemplate
	}
	return last, &list.NextCursor
}

// askPage makes req, a list request, ask for the page of cursor.
func askPage(req mcp.Request, cursor string) {
	switch r := req.(type) {
	case *mcp.ListToolsRequest:
		r.Params = cmp.Or(r.Params, &mcp.ListToolsParams{})
		r.Params.Cursor = cursor
	case *mcp.ListPromptsRequest:
		r.Params = cmp.Or(r.Params, &mcp.ListPromptsParams{})
		r.Params.Cursor = cursor
	case *mcp.ListResourcesRequest:
		r.Params = cmp.Or(r.Params, &mcp.ListResourcesParams{})
		r.Params.Cursor = cursor
	case *mcp.ListResourceTemplatesRequest:
		r.Params = cmp.Or(r.Params, &mcp.ListResourceTemplatesParams{})
		r.Params.Cursor = cursor
	}
}

// screenList keeps in res the items may lets through.
func (g *Gateway) screenList(res mcp.Result, may func(Offer, string) bool) {
	g.syncMu.Lock()
	defer g.syncMu.Unlock()
	switch list := res.(type) {
	case *mcp.ListToolsResult:
		list.Tools = keep(list.Tools, func(t *mcp.Tool) bool { return may(OfferTool, g.advertised[t.Name].public) })
	case *mcp.ListPromptsResult:
		list.Prompts = keep(list.Prompts, func(p *mcp.Prompt) bool { return may(OfferPrompt, g.offers.byServed[p.Name]) })
	case *mcp.ListResourcesResult:
		list.Resources = keep(list.Resources, func(r *mcp.Resource) bool {
			return may(OfferResource, cmp.Or(g.offers.uriServer[r.URI], g.offers.skillServer[r.URI]))
		})
	case *mcp.ListResourceTemplatesResult:
		list.ResourceTemplates = keep(list.ResourceTemplates, func(t *mcp.ResourceTemplate) bool {
			return may(OfferResource, cmp.Or(g.offers.tplServer[t.URITemplate], g.offers.skillServer[t.URITemplate]))
		})
	}
}

func keep[T any](items []T, ok func(T) bool) []T {
	out := items[:0:0]
	for _, it := range items {
		if ok(it) {
			out = append(out, it)
		}
	}
	return out
}

// clientName is the name ss's client gave in initialize, "" without one.
func clientName(ss *mcp.ServerSession) string {
	if ss == nil {
		return ""
	}
	if p := ss.InitializeParams(); p != nil && p.ClientInfo != nil {
		return p.ClientInfo.Name
	}
	return ""
}

// callClient names the client of req: as its request's reader read it
// (a oneRequest call), as its session's initialize did, else as its
// request's _meta does (a 2026-07-28 request the SDK serves carries its
// clientInfo each time, and its session was never initialized).
func callClient(req callRequest) string {
	if req.oneRequest {
		return req.client
	}
	if name := clientName(req.session); name != "" || req.params == nil {
		return name
	}
	info, _ := req.params.Meta[mcp.MetaKeyClientInfo].(map[string]any)
	name, _ := info["name"].(string)
	return name
}

// Rescreen tells every session that its lists may have changed, for a
// Screen whose decisions changed: a new policy applies to the sessions
// already open. Each session gets notifications/tools/list_changed, and
// prompts/list_changed and resources/list_changed when the gateway serves
// any prompt or resource. Every session is told, not only those whose
// lists changed: the gateway cannot screen a session's lists without its
// request's headers.
func (g *Gateway) Rescreen() {
	g.syncMu.Lock()
	defer g.syncMu.Unlock()
	g.views.epoch.Add(2) // every session with a view is owed it too
	g.relistTool()
	g.relistPrompt()
	g.relistResource()
}

// The relist functions list one served item again, as it is served: the
// SDK then sends its kind's list_changed to every session (debounced).
// syncMu must be held.

func (g *Gateway) relistTool() {
	for name, ad := range g.advertised {
		if t, ok := g.reg.Get(ad.public); ad.ok && ok {
			if err := g.addTool(name, t); err == nil {
				return
			}
		}
	}
}

func (g *Gateway) relistPrompt() {
	byName := map[string]tool.Prompt{}
	for _, p := range g.reg.Prompts() {
		byName[p.Name] = p
	}
	for served, public := range g.offers.byServed {
		p, ok := byName[public]
		if ok && g.offers.prompts[served] == promptDef(p) && guard(func() { g.servePrompt(served, p) }) == nil {
			return
		}
	}
}

func (g *Gateway) relistResource() {
	for _, r := range g.reg.Resources() {
		if g.offers.resources[r.URI] == offerDef(r.Server, r.Wire) && guard(func() { g.serveResource(r) }) == nil {
			return
		}
	}
	for _, t := range g.reg.ResourceTemplates() {
		if g.offers.templates[t.URITemplate] == offerDef(t.Server, t.Wire) && guard(func() { g.serveTemplate(t) }) == nil {
			return
		}
	}
}
