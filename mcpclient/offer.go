package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/naming"
	"github.com/mcpbridge/mcpbridge/internal/projection"
	"github.com/mcpbridge/mcpbridge/internal/redact"
	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/tool"
)

// listKind is a set of the lists a server can change.
type listKind uint32

const (
	kindTools listKind = 1 << iota
	kindResources
	kindPrompts

	allKinds = kindTools | kindResources | kindPrompts
)

// String names the lists of k, for logs.
func (k listKind) String() string {
	var names []string
	for _, n := range []struct {
		kind listKind
		name string
	}{{kindTools, "tools"}, {kindResources, "resources"}, {kindPrompts, "prompts"}} {
		if k&n.kind != 0 {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, ",")
}

// listed is the server's last good lists, published together; the
// supervisor goroutine only.
type listed struct {
	tools     []tool.Tool
	resources []tool.Resource
	templates []tool.ResourceTemplate
	prompts   []tool.Prompt
	skills    []tool.Skill // skills.go
}

// offer is what the server publishes now: its lists and the functions
// that serve them.
func (s *Server) offer(caps *mcp.ServerCapabilities) tool.Offer {
	o := tool.Offer{
		Tools: s.listed.tools, Server: s.cfg.ServerName,
		Resources: s.listed.resources, Templates: s.listed.templates, Prompts: s.listed.prompts,
		Skills: s.listed.skills, HideResources: s.cfg.HideResources,
	}
	if caps == nil {
		return o
	}
	if caps.Resources != nil {
		o.Read = s.readResource
		if caps.Resources.Subscribe {
			o.Subscribe, o.Unsubscribe = s.subscribe, s.unsubscribe
		}
	}
	if caps.Completions != nil {
		o.Complete = s.complete
	}
	return o
}

// capabilities returns what the server of gen said it offers (nil before
// the handshake ended).
func capabilities(gen *generation) *mcp.ServerCapabilities {
	if init := gen.session.InitializeResult(); init != nil {
		return init.Capabilities
	}
	return nil
}

// fetchOthers refreshes the resource and prompt lists of kinds. A list the
// server does not offer is empty; a failed fetch keeps the last good list
// and is logged, never failing the sync (the tools stand on their own).
func (s *Server) fetchOthers(ctx context.Context, gen *generation, kinds listKind) {
	caps := capabilities(gen)
	if kinds&kindResources != 0 {
		if caps == nil || caps.Resources == nil {
			s.listed.resources, s.listed.templates = nil, nil
		} else {
			s.listed.resources = keepOrLog(s, "resources/list", s.listed.resources, func() ([]tool.Resource, error) { return s.fetchResources(ctx, gen) })
			s.listed.templates = keepOrLog(s, "resources/templates/list", s.listed.templates, func() ([]tool.ResourceTemplate, error) { return s.fetchTemplates(ctx, gen) })
		}
		// Skill files are resources: their listing follows the resources'.
		if caps != nil && caps.Resources != nil && offersSkills(gen) {
			s.listed.skills = keepOrLog(s, "skills/list", s.listed.skills, func() ([]tool.Skill, error) { return s.fetchSkills(ctx, gen) })
		} else {
			s.listed.skills = nil
		}
	}
	if kinds&kindPrompts != 0 {
		if caps == nil || caps.Prompts == nil {
			s.listed.prompts = nil
		} else {
			s.listed.prompts = keepOrLog(s, "prompts/list", s.listed.prompts, func() ([]tool.Prompt, error) { return s.fetchPrompts(ctx, gen) })
		}
	}
}

// keepOrLog returns fetch's list, or last when it fails (logged).
func keepOrLog[T any](s *Server, method string, last []T, fetch func() ([]T, error)) []T {
	list, err := fetch()
	if err != nil {
		s.log.Error("list fetch failed; keeping the last good list", "method", method, "err", err)
		return last
	}
	return list
}

// pageFunc sends one list request for cursor.
type pageFunc func(ctx context.Context, cursor string) (any, error)

// listNoun names the items of a list result's field in errors.
func listNoun(field string) string {
	if field == "resourceTemplates" {
		return "resource templates"
	}
	return field
}

// listAll fetches every page of a list method and returns the raw items
// under field, bounded as tools/list is (paginate).
func (s *Server) listAll(ctx context.Context, gen *generation, method, field string, page pageFunc) ([]json.RawMessage, error) {
	var items []json.RawMessage
	err := paginate(s, method, listNoun(field), func(cursor string) ([]json.RawMessage, string, int64, error) {
		raw, err := s.roundTrip(ctx, gen, method, func(ctx context.Context) (any, error) { return page(ctx, cursor) })
		if err != nil {
			return nil, "", 0, err
		}
		var p map[string]json.RawMessage
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &p); err != nil || json.Unmarshal(p[field], &list) != nil {
			return nil, "", 0, fmt.Errorf("%s: invalid result: no %q array", method, field)
		}
		var next string
		_ = json.Unmarshal(p["nextCursor"], &next) // absent or not a string: the last page
		return list, next, int64(len(raw)), nil
	}, func(list []json.RawMessage) error {
		items = append(items, list...)
		return nil
	})
	return items, err
}

// wireResource holds the fields of a resource or template the bridge reads.
type wireResource struct {
	URI         string `json:"uri"`
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	MIMEType    string `json:"mimeType"`
}

func (s *Server) fetchResources(ctx context.Context, gen *generation) ([]tool.Resource, error) {
	seen := map[string]bool{}
	return fetchList(s, ctx, gen, "resources/list", "resources", func(ctx context.Context, c string) (any, error) {
		return gen.session.ListResources(ctx, &mcp.ListResourcesParams{Cursor: c})
	}, func(w wireResource, ok bool, raw json.RawMessage) (tool.Resource, bool) {
		if !ok || w.URI == "" || seen[w.URI] {
			s.ignored("resource", "resource", "not an object with a unique uri", raw)
			return tool.Resource{}, false
		}
		seen[w.URI] = true
		return tool.Resource{Server: s.cfg.ServerName, URI: w.URI, Name: w.Name, Title: w.Title,
			Description: w.Description, MIMEType: w.MIMEType, Wire: raw}, true
	})
}

func (s *Server) fetchTemplates(ctx context.Context, gen *generation) ([]tool.ResourceTemplate, error) {
	return fetchList(s, ctx, gen, "resources/templates/list", "resourceTemplates", func(ctx context.Context, c string) (any, error) {
		return gen.session.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: c})
	}, func(w wireResource, ok bool, raw json.RawMessage) (tool.ResourceTemplate, bool) {
		if !ok || w.URITemplate == "" {
			s.ignored("resource template", "template", "not an object with a uriTemplate", raw)
			return tool.ResourceTemplate{}, false
		}
		return tool.ResourceTemplate{Server: s.cfg.ServerName, URITemplate: w.URITemplate, Name: w.Name,
			Title: w.Title, Description: w.Description, MIMEType: w.MIMEType, Wire: raw}, true
	})
}

// fetchList lists every item of method (under field in each page) and
// keeps those build accepts: build gets each decoded into W (ok false when
// it is not one) and logs why it leaves one out.
func fetchList[W, T any](s *Server, ctx context.Context, gen *generation, method, field string, page pageFunc, build func(w W, ok bool, raw json.RawMessage) (T, bool)) ([]T, error) {
	items, err := s.listAll(ctx, gen, method, field, page)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(items))
	for _, raw := range items {
		var w W
		ok := json.Unmarshal(raw, &w) == nil
		if it, keep := build(w, ok, raw); keep {
			out = append(out, it)
		}
	}
	return out, nil
}

// ignored logs an item of the server's lists left out (under key, its
// first 200 bytes), and why, when the last sync did not.
func (s *Server) ignored(kind, key, why string, raw json.RawMessage) {
	list := kindResources // resources, templates and skills
	if kind == "prompt" {
		list = kindPrompts
	}
	s.warnDef(list, kind+" ignored: "+why, key, string(raw[:min(len(raw), 200)]))
}

// wirePrompt holds the fields of a prompt the bridge reads.
type wirePrompt struct {
	Name        string                `json:"name"`
	Title       string                `json:"title"`
	Description string                `json:"description"`
	Arguments   []tool.PromptArgument `json:"arguments"`
}

func (s *Server) fetchPrompts(ctx context.Context, gen *generation) ([]tool.Prompt, error) {
	byName := map[string]string{}
	return fetchList(s, ctx, gen, "prompts/list", "prompts", func(ctx context.Context, c string) (any, error) {
		return gen.session.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: c})
	}, func(w wirePrompt, ok bool, raw json.RawMessage) (tool.Prompt, bool) {
		if !ok || w.Name == "" {
			s.ignored("prompt", "prompt", "not an object with a name", raw)
			return tool.Prompt{}, false
		}
		public := naming.Public(s.cfg.ServerName, w.Name)
		if prev, dup := byName[public]; dup {
			s.warnDef(kindPrompts, "prompt ignored: its public name is taken by another of the server's prompts", "prompt", w.Name, "kept", prev, "public", public)
			return tool.Prompt{}, false
		}
		byName[public] = w.Name
		return tool.Prompt{Name: public, Origin: tool.Origin{Server: s.cfg.ServerName, Name: w.Name},
			Title: w.Title, Description: w.Description, Arguments: w.Arguments, Get: s.prompter(w.Name), Wire: raw}, true
	})
}

// roundTrip sends one request of the server's current connection through
// do and returns its raw result. It ends with ctx, toolCallTimeoutMs or
// the connection, and counts as in flight for Drain.
func (s *Server) roundTrip(ctx context.Context, gen *generation, method string, do func(ctx context.Context) (any, error)) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, s.cfg.ToolCallTimeout, errCallTimeout)
	defer cancel()
	ctx, stop := mergeCancel(ctx, gen.ctx)
	defer stop()
	slot := sdkwire.NewSlot(sdkwire.PassResult)
	typed, err := do(sdkwire.WithSlot(ctx, slot))
	gen.table.Forget(slot)
	if err != nil {
		var wire *jsonrpc.Error
		switch cause := context.Cause(ctx); {
		case errors.As(err, &wire):
			return nil, fmt.Errorf("server %q: %s: %w", s.cfg.ServerName, method, describeCallError(err))
		case errors.Is(cause, errCallTimeout):
			gen.table.ExpectCancel()
			return nil, fmt.Errorf("server %q did not answer %s within toolCallTimeoutMs (%dms)", s.cfg.ServerName, method, s.cfg.ToolCallTimeout.Milliseconds())
		case ctx.Err() != nil:
			gen.table.ExpectCancel()
			return nil, fmt.Errorf("%s cancelled: %w", method, cause)
		}
		return nil, fmt.Errorf("server %q: %s: %w", s.cfg.ServerName, method, redact.Error(err))
	}
	if raw, ok := slot.Result(); ok {
		return raw, nil
	}
	// Answered from the SDK's cache (protocol 2026-07-28): its typed copy.
	return json.Marshal(typed)
}

// request runs method on the current connection (see roundTrip).
func (s *Server) request(ctx context.Context, method string, do func(gen *generation, ctx context.Context) (any, error)) (json.RawMessage, error) {
	s.inflight.enter()
	defer s.inflight.leave()
	cl := s.callers.enter(ctx)
	defer s.callers.leave(cl)
	gen, err := s.current()
	if err != nil {
		return nil, err
	}
	return s.roundTrip(cl, gen, method, func(ctx context.Context) (any, error) { return do(gen, ctx) })
}

// readResource is the server's tool.ReadFunc.
func (s *Server) readResource(ctx context.Context, uri string) (tool.ReadResult, error) {
	raw, err := s.request(ctx, "resources/read", func(gen *generation, ctx context.Context) (any, error) {
		return gen.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri, Meta: s.requestMeta(gen)})
	})
	if err != nil {
		return tool.ReadResult{}, err
	}
	texts, err := projection.ResourceContents(raw)
	if err != nil {
		return tool.ReadResult{}, fmt.Errorf("server %q returned an invalid resources/read result: %w", s.cfg.ServerName, err)
	}
	res := tool.ReadResult{Wire: raw, Content: make([]tool.Content, len(texts))}
	for i, t := range texts {
		res.Content[i] = tool.Text(t)
	}
	return res, nil
}

// prompter is the tool.PromptFunc of the server's prompt raw.
func (s *Server) prompter(raw string) tool.PromptFunc {
	return func(ctx context.Context, args map[string]string) (tool.PromptResult, error) {
		wire, err := s.request(ctx, "prompts/get", func(gen *generation, ctx context.Context) (any, error) {
			return gen.session.GetPrompt(ctx, &mcp.GetPromptParams{Name: raw, Arguments: args, Meta: s.requestMeta(gen)})
		})
		if err != nil {
			return tool.PromptResult{}, err
		}
		var res struct {
			Description string `json:"description"`
			Messages    []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(wire, &res); err != nil {
			return tool.PromptResult{}, fmt.Errorf("server %q returned an invalid prompts/get result: %w", s.cfg.ServerName, err)
		}
		out := tool.PromptResult{Description: res.Description, Wire: wire, Messages: make([]tool.PromptMessage, len(res.Messages))}
		for i, m := range res.Messages {
			out.Messages[i] = tool.PromptMessage{Role: m.Role, Content: []tool.Content{tool.Text(projection.PromptMessage(m.Content))}}
		}
		return out, nil
	}
}

// complete is the server's tool.CompleteFunc.
func (s *Server) complete(ctx context.Context, req tool.CompleteRequest) (tool.Completion, error) {
	var res *mcp.CompleteResult
	params := &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: req.Ref.Type, Name: req.Ref.Name, URI: req.Ref.URI},
		Argument: mcp.CompleteParamsArgument{Name: req.Argument.Name, Value: req.Argument.Value},
	}
	if len(req.Context) > 0 {
		params.Context = &mcp.CompleteContext{Arguments: req.Context}
	}
	_, err := s.request(ctx, "completion/complete", func(gen *generation, ctx context.Context) (any, error) {
		var err error
		res, err = gen.session.Complete(ctx, params)
		return res, err
	})
	if err != nil {
		return tool.Completion{}, err
	}
	c := res.Completion
	return tool.Completion{Values: c.Values, Total: c.Total, HasMore: c.HasMore}, nil
}

// subscriptions are the URIs a consumer subscribed to, re-subscribed on
// every new connection.
type subscriptions struct {
	mu   sync.Mutex
	uris map[string]bool
	// ended counts the ends of a URI's subscription by the server, in
	// the window that began with the first (protocol 2026-07-28).
	ended map[string]serverEnds
}

// serverEnds is how often the server ended one subscription lately.
type serverEnds struct {
	since time.Time
	n     int
}

// Renewing a subscription the server ended: at most maxRenewals in
// renewalWindow, past which the server is taken to mean it.
const (
	maxRenewals   = 3
	renewalWindow = time.Minute
)

// subscribe asks the server for updates of uri. On protocol 2026-07-28 the
// SDK holds a subscriptions/listen stream open for it, in the background,
// until Unsubscribe or the session's end. A subscription that fails is
// forgotten: its subscriber holds nothing to cancel, so it would be
// renewed on every new connection for good.
func (s *Server) subscribe(ctx context.Context, uri string) error {
	s.subs.mu.Lock()
	if s.subs.uris == nil {
		s.subs.uris = map[string]bool{}
	}
	s.subs.uris[uri] = true
	s.subs.mu.Unlock()
	gen, err := s.current()
	if err != nil {
		return nil // subscribed on the next connection
	}
	if err := s.subscribeOn(ctx, gen, uri); err != nil {
		s.forget(uri)
		return err
	}
	return nil
}

// forget drops uri from the subscriptions renewed on a new connection.
func (s *Server) forget(uri string) {
	s.subs.mu.Lock()
	delete(s.subs.uris, uri)
	delete(s.subs.ended, uri)
	s.subs.mu.Unlock()
}

// wanted reports whether a consumer is subscribed to uri.
func (s *Server) wanted(uri string) bool {
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	return s.subs.uris[uri]
}

// subscriptionEnded renews, on gen, the subscriptions to uris the server
// ended (protocol 2026-07-28: the SDK still counts them, but no update
// comes), each at most maxRenewals times in renewalWindow; past that it
// is forgotten, with a warning, as the server refused it.
func (s *Server) subscriptionEnded(gen *generation, uris []string) {
	for _, uri := range uris {
		if !s.endedAgain(uri) {
			s.log.Warn("the server keeps ending a resource subscription: not renewed, its updates stop", "uri", uri, "ends", maxRenewals+1, "within", renewalWindow)
			continue
		}
		go s.renew(gen, uri)
	}
}

// endedAgain counts an end of uri's subscription, and reports whether it
// is to be renewed: still wanted, and not ended too often.
func (s *Server) endedAgain(uri string) bool {
	s.subs.mu.Lock()
	defer s.subs.mu.Unlock()
	if !s.subs.uris[uri] {
		return false
	}
	if s.subs.ended == nil {
		s.subs.ended = map[string]serverEnds{}
	}
	e := s.subs.ended[uri]
	if now := time.Now(); now.Sub(e.since) > renewalWindow {
		e = serverEnds{since: now}
	}
	e.n++
	if e.n > maxRenewals {
		delete(s.subs.uris, uri)
		delete(s.subs.ended, uri)
		return false
	}
	s.subs.ended[uri] = e
	return true
}

// renew subscribes to uri again on gen. The SDK counts it subscribed
// still: its subscription is ended there first. A consumer that
// unsubscribed meanwhile is not subscribed again.
func (s *Server) renew(gen *generation, uri string) {
	ctx, cancel := context.WithTimeout(gen.ctx, s.cfg.ToolCallTimeout)
	defer cancel()
	_ = gen.session.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	if err := s.subscribeOn(ctx, gen, uri); err != nil {
		s.log.Warn("resource subscription the server ended not renewed", "uri", uri, "err", err)
		return
	}
	if !s.wanted(uri) {
		_ = gen.session.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
		return
	}
	s.log.Info("the server ended a resource subscription: renewed", "uri", uri)
}

// subscribeOn subscribes to uri on gen.
func (s *Server) subscribeOn(ctx context.Context, gen *generation, uri string) error {
	if listens(gen) {
		// The SDK sends subscriptions/listen and returns; it owns the
		// stream, which ends with Unsubscribe or the session's Close. The
		// call is the caller's, not a goroutine's nobody waits for.
		return gen.session.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
	}
	_, err := s.roundTrip(ctx, gen, "resources/subscribe", func(ctx context.Context) (any, error) {
		return struct{}{}, gen.session.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
	})
	return err
}

// listens reports whether gen speaks 2026-07-28, where a subscription is a
// subscriptions/listen stream.
func listens(gen *generation) bool {
	init := gen.session.InitializeResult()
	return init != nil && init.ProtocolVersion >= "2026-07-28"
}

// unsubscribe stops the updates of uri.
func (s *Server) unsubscribe(ctx context.Context, uri string) error {
	s.forget(uri)
	gen, err := s.current()
	if err != nil {
		return nil
	}
	_, err = s.roundTrip(ctx, gen, "resources/unsubscribe", func(ctx context.Context) (any, error) {
		return struct{}{}, gen.session.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	})
	return err
}

// resubscribe renews the consumers' subscriptions on a new connection.
func (s *Server) resubscribe(ctx context.Context, gen *generation) {
	s.subs.mu.Lock()
	uris := make([]string, 0, len(s.subs.uris))
	for uri := range s.subs.uris {
		uris = append(uris, uri)
	}
	s.subs.mu.Unlock()
	for _, uri := range uris {
		if err := s.subscribeOn(ctx, gen, uri); err != nil {
			s.log.Warn("resource subscription not renewed", "uri", uri, "err", err)
		}
	}
}
