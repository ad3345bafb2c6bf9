package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/tasks"
	"github.com/mcpbridge/mcpbridge/tool"
)

// offerState is what the gateway lists of the registry's resources,
// templates and prompts, to diff the next sync against; syncMu guards it.
type offerState struct {
	resources map[string]string // URI → server and definition as listed
	templates map[string]string // URI template → server and definition
	prompts   map[string]string // served name → public name and definition
	lost      map[string]bool   // "kind key server" of items another server took, logged once
	byServed  map[string]string // served prompt name → public name (completion routing)
	tplServer map[string]string // URI template → its server (completion routing)
	uriServer map[string]string // resource URI → its server (subscriptions)
	subs      map[string]func() // subKey of a subscribed URI → cancels the registry subscription
	// skills.go: each SKILL.md and skill file template served, as listed,
	// and each one's server (screening).
	skillFiles, skillTpls map[string]string
	skillServer           map[string]string
}

// syncOffers makes the server's resources, templates and prompts equal the
// registry's, by a diff like sync's tools (the registry's tools, which
// with order name the servers). syncMu must be held.
func (g *Gateway) syncOffers(order []string, tools []tool.Tool) {
	rank := tool.ByPrecedence(order)
	space := g.newSkillSpace(order, tools)
	g.syncResources(rank, space)
	g.syncTemplates(rank, space)
	g.syncPrompts(order)
	g.syncSkills(rank)
}

// firstOffer keeps, for each key, the item of the server first by rank, and
// logs (once) each item left out.
func firstOffer[T any](g *Gateway, kind string, items []T, key func(T) (k, server string), rank func(a, b string) int) map[string]T {
	kept := make(map[string]T, len(items))
	for _, it := range items {
		k, server := key(it)
		if prev, taken := kept[k]; taken {
			_, prevServer := key(prev)
			if rank(server, prevServer) >= 0 {
				g.reportLost(kind, k, server, prevServer)
				continue
			}
			g.reportLost(kind, k, prevServer, server)
		}
		kept[k] = it
	}
	return kept
}

// reportLost logs, once, that server's item key is not served because
// keptBy offers the same and comes first in the config.
func (g *Gateway) reportLost(kind, key, server, keptBy string) {
	g.reportOnce(kind+" "+key+" "+server, kind+" not served: another server offers the same and comes first in the config",
		kind, key, "server", server, "served_from", keptBy)
}

// reportOnce logs msg with args the first time id is reported.
func (g *Gateway) reportOnce(id, msg string, args ...any) {
	if g.offers.lost[id] {
		return
	}
	if g.offers.lost == nil {
		g.offers.lost = map[string]bool{}
	}
	g.offers.lost[id] = true
	g.log.Warn(msg, args...)
}

func (g *Gateway) syncResources(rank func(a, b string) int, space skillSpace) {
	res := outsideSkillSpace(g, "resource", withoutSkillFiles(g.reg.Resources(), space.skills), space,
		func(r tool.Resource) (string, string) { return r.URI, r.Server })
	g.offers.resources, g.offers.uriServer = syncByURI(g, "resource", res, g.offers.resources, rank,
		func(r tool.Resource) (string, string, json.RawMessage) { return r.URI, r.Server, r.Wire },
		g.serveResource, g.server.RemoveResources)
}

// serveResource lists r (or lists it again: the SDK then tells every
// session that the resources list changed).
func (g *Gateway) serveResource(r tool.Resource) {
	res := &mcp.Resource{}
	if json.Unmarshal(r.Wire, res) != nil {
		res = &mcp.Resource{}
	}
	res.URI, res.Name, res.Title, res.Description, res.MIMEType = r.URI, r.Name, r.Title, r.Description, r.MIMEType
	g.server.AddResource(res, g.reader(r.Server))
}

func (g *Gateway) syncTemplates(rank func(a, b string) int, space skillSpace) {
	tpls := outsideSkillSpace(g, "resource template", g.reg.ResourceTemplates(), space,
		func(t tool.ResourceTemplate) (string, string) { return t.URITemplate, t.Server })
	g.offers.templates, g.offers.tplServer = syncByURI(g, "resource template", tpls, g.offers.templates, rank,
		func(t tool.ResourceTemplate) (string, string, json.RawMessage) {
			return t.URITemplate, t.Server, t.Wire
		},
		g.serveTemplate, g.server.RemoveResourceTemplates)
}

// serveTemplate lists t, as serveResource does a resource.
func (g *Gateway) serveTemplate(t tool.ResourceTemplate) {
	rt := &mcp.ResourceTemplate{}
	if json.Unmarshal(t.Wire, rt) != nil {
		rt = &mcp.ResourceTemplate{}
	}
	rt.URITemplate, rt.Name, rt.Title, rt.Description, rt.MIMEType = t.URITemplate, t.Name, t.Title, t.Description, t.MIMEType
	g.server.AddResourceTemplate(rt, g.reader(t.Server))
}

// syncByURI makes the server's items of one kind served by URI (resources,
// or templates by URI template) equal items, by a diff against was (the
// definitions listed, by URI): add lists a new or changed item (the SDK
// may refuse it by panicking: the item is then not served, and the log
// says why), remove drops the gone ones. It returns the definitions now
// listed and each URI's server.
func syncByURI[T any](g *Gateway, kind string, items []T, was map[string]string, rank func(a, b string) int,
	of func(T) (uri, server string, wire json.RawMessage), add func(T), remove func(...string)) (now, servers map[string]string) {
	kept := firstOffer(g, kind, items, func(it T) (string, string) {
		uri, server, _ := of(it)
		return uri, server
	}, rank)
	now, servers = make(map[string]string, len(kept)), make(map[string]string, len(kept))
	for uri, it := range kept {
		_, server, wire := of(it)
		def := offerDef(server, wire)
		now[uri], servers[uri] = def, server
		if was[uri] == def {
			continue
		}
		if err := guard(func() { add(it) }); err != nil {
			g.log.Warn(kind+" not served", "uri", uri, "server", server, "err", err)
			delete(now, uri)
		}
	}
	remove(gone(was, now)...)
	return now, servers
}

func (g *Gateway) syncPrompts(order []string) {
	prompts := g.reg.Prompts()
	asTools := make([]tool.Tool, len(prompts))
	byPublic := make(map[string]tool.Prompt, len(prompts))
	for i, p := range prompts {
		asTools[i] = tool.Tool{Name: p.Name, Origin: p.Origin}
		byPublic[p.Name] = p
	}
	list, lost := listings(asTools, g.opts.RawNames, order)
	for _, l := range lost {
		g.reportLost("prompt", l.tool, l.server, l.keptBy)
	}
	now := make(map[string]string, len(list))
	byServed := make(map[string]string, len(list))
	for _, l := range list {
		p := byPublic[l.tool.Name]
		def := promptDef(p)
		now[l.served], byServed[l.served] = def, p.Name
		if g.offers.prompts[l.served] == def {
			continue
		}
		if err := guard(func() { g.servePrompt(l.served, p) }); err != nil {
			g.log.Warn("prompt not served", "prompt", l.served, "err", err)
			delete(now, l.served)
		}
	}
	g.server.RemovePrompts(gone(g.offers.prompts, now)...)
	g.offers.prompts, g.offers.byServed = now, byServed
}

// servePrompt lists p as served (or lists it again: the SDK then tells
// every session that the prompts list changed).
func (g *Gateway) servePrompt(served string, p tool.Prompt) {
	mp := &mcp.Prompt{}
	if json.Unmarshal(p.Wire, mp) != nil {
		mp = &mcp.Prompt{}
	}
	mp.Name, mp.Title, mp.Description = served, p.Title, p.Description
	g.server.AddPrompt(mp, g.prompter(p.Name))
}

// offerDef and promptDef are an item's definition as listed, to diff
// syncs against.
func offerDef(server string, wire json.RawMessage) string { return server + "\x00" + string(wire) }

func promptDef(p tool.Prompt) string { return p.Name + "\x00" + string(p.Wire) }

// gone returns the keys of was that are not in now.
func gone(was, now map[string]string) []string {
	var out []string
	for k := range was {
		if _, ok := now[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// guard runs add, turning the SDK's panics on a definition it refuses into
// an error: one bad backend item must not take the gateway down.
func guard(add func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the MCP SDK refused its definition: %v", r)
		}
	}()
	add()
	return nil
}

// reader serves resources/read for server's resources and templates.
func (g *Gateway) reader(server string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return g.read(ctx, server, req, req.Params.URI)
	}
}

// read serves req, a resources/read of server's resource, which its
// client sent as served. One the Gate hides is answered as one of a URI
// no server offers (the SDK's words), under the URI the client sent, so
// that the caller learns nothing of it.
func (g *Gateway) read(ctx context.Context, server string, req *mcp.ReadResourceRequest, served string) (*mcp.ReadResourceResult, error) {
	p := req.Params
	wire, questions, err := g.offered(ctx, req.Session, req.Extra, offerRequest{MethodReadResource, p.URI, nil, server, p.RequestState, p.InputResponses},
		func(ctx context.Context) (json.RawMessage, error) {
			res, err := g.reg.ReadResource(ctx, server, p.URI)
			return res.Wire, err
		})
	switch {
	case errors.Is(err, ErrHidden):
		return nil, mcp.ResourceNotFoundError(served)
	case err != nil:
		return nil, err
	}
	if questions != nil {
		return &mcp.ReadResourceResult{InputRequests: questions.requests, RequestState: questions.state}, nil
	}
	out := &mcp.ReadResourceResult{}
	if err := json.Unmarshal(wire, out); err != nil {
		return nil, fmt.Errorf("server %q returned a resources/read result the gateway cannot forward: %w", server, err)
	}
	return out, nil
}

// prompter serves prompts/get for the prompt public. One the Gate hides
// is answered as a prompt the gateway does not serve (the SDK's words),
// under the name the client sent, so that the caller learns nothing of it.
func (g *Gateway) prompter(public string) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		p := req.Params
		wire, questions, err := g.offered(ctx, req.Session, req.Extra, offerRequest{MethodGetPrompt, public, p.Arguments, "", p.RequestState, p.InputResponses},
			func(ctx context.Context) (json.RawMessage, error) {
				res, err := g.reg.GetPrompt(ctx, public, p.Arguments)
				return res.Wire, err
			})
		switch {
		case errors.Is(err, ErrHidden):
			return nil, unknownPrompt(p.Name)
		case err != nil:
			return nil, err
		}
		if questions != nil {
			return &mcp.GetPromptResult{InputRequests: questions.requests, RequestState: questions.state}, nil
		}
		out := &mcp.GetPromptResult{}
		if err := json.Unmarshal(wire, out); err != nil {
			return nil, fmt.Errorf("prompts/get %q: the result cannot be forwarded: %w", public, err)
		}
		return out, nil
	}
}

// complete serves completion/complete, routed by its reference.
func (g *Gateway) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	p := req.Params
	if p == nil || p.Ref == nil {
		return nil, errors.New("completion/complete: missing ref")
	}
	in := tool.CompleteRequest{
		Ref:      tool.CompletionRef{Type: p.Ref.Type, URI: p.Ref.URI},
		Argument: tool.CompletionArgument{Name: p.Argument.Name, Value: p.Argument.Value},
	}
	if p.Context != nil {
		in.Context = p.Context.Arguments
	}
	g.syncMu.Lock()
	switch p.Ref.Type {
	case tool.RefPrompt:
		in.Ref.Name = g.offers.byServed[p.Ref.Name]
	case tool.RefResource:
		in.Server = g.offers.tplServer[p.Ref.URI]
	}
	g.syncMu.Unlock()
	if !g.mayComplete(ctx, req, in) {
		return nil, unknownRef(p.Ref)
	}
	c, err := g.reg.Complete(ctx, in)
	if err != nil {
		return nil, err
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: nonNil(c.Values), Total: c.Total, HasMore: c.HasMore}}, nil
}

// mayComplete reports whether the caller of req may complete in: a
// prompt or template the gateway serves, and, with a Screen, one the
// caller may see (a prompt by its public name, a template by its
// server), so that a completion, whose values may be data, never reaches
// a backend the caller may not use.
func (g *Gateway) mayComplete(ctx context.Context, req *mcp.CompleteRequest, in tool.CompleteRequest) bool {
	var kind Offer
	var name string
	switch in.Ref.Type {
	case tool.RefPrompt:
		kind, name = OfferPrompt, in.Ref.Name
	case tool.RefResource:
		kind, name = OfferResource, in.Server
	default:
		return true // a type of neither: the registry says so
	}
	return name != "" && g.visibleToCaller(ctx, req)(kind, name)
}

// unknownRef answers a completion of a prompt or template the caller
// cannot complete: as one no server offers, whether none does or the
// caller may not see it.
func unknownRef(ref *mcp.CompleteReference) error {
	if ref.Type == tool.RefPrompt {
		return unknownPrompt(ref.Name)
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%v lists the resource template %q", tool.ErrNoServer, ref.URI)}
}

// unknownPrompt is the error of a request naming a prompt the gateway
// does not serve, in the SDK's words for one (Server.getPrompt).
func unknownPrompt(name string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%v %q", tool.ErrUnknownPrompt, name)}
}

// nonNil returns s, or an empty slice for nil ("values" is required).
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// subscribe serves resources/subscribe: one registry subscription per URI,
// whose updates the SDK sends to every session that subscribed.
func (g *Gateway) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	uri := req.Params.URI
	g.syncMu.Lock()
	server, at, known := g.servedAt(uri)
	_, subscribed := g.offers.subs[subKey(server, uri)]
	g.syncMu.Unlock()
	may := g.visibleToCaller(ctx, req)
	if !known || !may(OfferResource, server) {
		// A resource the caller may not see is one that does not exist.
		return mcp.ResourceNotFoundError(uri)
	}
	if !subscribed {
		if err := g.subscribeAt(ctx, server, at, uri); err != nil {
			return err
		}
	}
	g.keepSubscriber(ctx, req.Session, uri, may)
	return nil
}

// servedAt is the server of uri, a resource the gateway serves, and the
// URI that server knows it by: a listed resource's own, or a skill
// file's backend URI (skillFileAt), whose reads go through a template;
// false for a URI the gateway serves nothing at. syncMu must be held.
func (g *Gateway) servedAt(uri string) (server, at string, ok bool) {
	if server, ok := g.offers.uriServer[uri]; ok {
		return server, uri, true
	}
	return g.skillFileAt(uri)
}

// subscribeAt makes the gateway's subscription to uri, known to server
// as at, which ctx bounds the making of, unless one raced it there. Its
// updates are uri's.
func (g *Gateway) subscribeAt(ctx context.Context, server, at, uri string) error {
	cancel, err := g.reg.SubscribeResource(ctx, server, at, func(string) { g.updates.add(uri) })
	if err != nil {
		return err
	}
	g.syncMu.Lock()
	_, raced := g.offers.subs[subKey(server, uri)]
	closed := g.isClosed() // after Close took the subscriptions, nobody cancels a new one
	if !raced && !closed {
		if g.offers.subs == nil {
			g.offers.subs = map[string]func(){}
		}
		g.offers.subs[subKey(server, uri)] = cancel
	}
	g.syncMu.Unlock()
	if raced || closed {
		cancel() // outside syncMu: it may tell the server
	}
	if closed {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the gateway is shutting down"}
	}
	return nil
}

// moveSubscriptions moves each of the gateway's subscriptions whose URI
// another server serves now (the config's order changed) to that server,
// so that the sessions subscribed keep getting its updates, from the
// server serving it. One whose URI no server serves stays: its server
// may be restarting, and the registry renews it with its successor.
func (g *Gateway) moveSubscriptions() {
	type move struct {
		uri, to string
		cancel  func()
	}
	var moves []move
	g.syncMu.Lock()
	for key, cancel := range g.offers.subs {
		server, uri, _ := strings.Cut(key, subKeySep)
		if now, served := g.offers.uriServer[uri]; served && now != server {
			delete(g.offers.subs, key)
			moves = append(moves, move{uri, now, cancel})
		}
	}
	g.syncMu.Unlock()
	for _, m := range moves {
		m.cancel() // outside syncMu: it may tell the server
		ctx, stop := context.WithTimeout(context.Background(), moveWait)
		if err := g.subscribeAt(ctx, m.to, m.uri, m.uri); err != nil {
			g.log.Warn("resource subscription not moved to the server serving it now", "uri", m.uri, "server", m.to, "err", err)
		}
		stop()
	}
}

// moveWait bounds making a moved subscription at its new server.
const moveWait = 30 * time.Second

// subKey names the gateway's subscription to uri at server: a URI served
// from another server (the config's order changed) is subscribed to there
// (moveSubscriptions), or its updates would never come.
func subKey(server, uri string) string { return server + subKeySep + uri }

// subKeySep parts a subKey: no server's name holds it.
const subKeySep = "\x00"

// unsubscribe serves resources/unsubscribe, and the end of a listen's
// subscriptions. The backend subscription stays while the gateway runs
// (other sessions may hold it; the SDK tracks which): updates for a
// session that left are simply not sent to it.
func (g *Gateway) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	g.forgetSubscriber(req.Session, req.Params.URI)
	return nil
}

// setCapabilities adjusts the capabilities of an initialize or
// server/discover result.
func (g *Gateway) setCapabilities(res mcp.Result) {
	// A failed handshake has a nil result of its type (an initialize sent
	// again on a session that has one).
	switch r := res.(type) {
	case *mcp.InitializeResult:
		if r != nil {
			g.capabilities(r.Capabilities)
			g.declareSkillsExtension(r.Capabilities)
			if r.ProtocolVersion >= "2026-07-28" {
				declareTaskExtension(r.Capabilities)
			}
		}
	case *mcp.DiscoverResult:
		if r != nil {
			g.capabilities(r.Capabilities)
			g.declareSkillsExtension(r.Capabilities)
			declareTaskExtension(r.Capabilities)
		}
	}
}

// declareTaskExtension declares the 2026-07-28 tasks extension
// (taskext.go) in caps, on a copy of its extensions: the SDK's map may be
// shared.
func declareTaskExtension(caps *mcp.ServerCapabilities) {
	if caps == nil {
		return
	}
	ext := maps.Clone(caps.Extensions)
	if ext == nil {
		ext = map[string]any{}
	}
	ext[tasks.Extension] = map[string]any{}
	caps.Extensions = ext
}

// capabilities sets what the gateway says it offers besides tools: what
// the backends offer once their first start has settled, everything
// before (the backends may offer it a moment later, and capabilities do
// not change within a session).
func (g *Gateway) capabilities(caps *mcp.ServerCapabilities) {
	if caps == nil {
		return
	}
	unknown := !g.isReady()
	resources, subscribe, prompts, complete := unknown, unknown, unknown, unknown
	for _, o := range g.reg.Servers() {
		resources = resources || o.Resources
		subscribe = subscribe || o.Subscribe
		prompts = prompts || o.Prompts
		complete = complete || o.Complete
	}
	caps.Resources, caps.Prompts, caps.Completions = nil, nil, nil
	if resources {
		caps.Resources = &mcp.ResourceCapabilities{ListChanged: true, Subscribe: subscribe}
	}
	if prompts {
		caps.Prompts = &mcp.PromptCapabilities{ListChanged: true}
	}
	if complete {
		caps.Completions = &mcp.CompletionCapabilities{}
	}
}
