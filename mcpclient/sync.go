package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/naming"
	"github.com/mcpbridge/mcpbridge/internal/redact"
	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/internal/textcut"
	"github.com/mcpbridge/mcpbridge/tool"
)

// maxPages bounds pagination (docs/decisions.md §8): a server whose cursors never
// end fails the fetch instead of looping forever.
const maxPages = 1000

// PublicToolName returns the model-visible name of a server's tool:
// mcp__<serverName>__<rawName>, normalized to 64 characters of
// [A-Za-z0-9_-] with a 12-hex hash of the identity when the normalization
// is lossy or the name too long. It is a pure function and a v1 contract:
// the same inputs give the same name forever (docs/decisions.md §2).
func PublicToolName(serverName, rawName string) string {
	return naming.Public(serverName, rawName)
}

// remoteTool is one tool of the server as listed, with what a call needs.
type remoteTool struct {
	raw          string
	public       string
	title        string
	description  string
	inputSchema  json.RawMessage
	outputSchema json.RawMessage
	annotations  json.RawMessage // as sent; nil when absent or not an object
	meta         json.RawMessage // _meta as sent; nil when absent or not an object
	taskRequired bool
	taskOptional bool
	icons        []tool.Icon
	output       *outputValidator // nil without an outputSchema
}

// wireTool is a tools/list entry as sent; schemas stay raw bytes so they
// pass through untouched.
type wireTool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	Annotations  json.RawMessage `json:"annotations"`
	Icons        json.RawMessage `json:"icons"`
	Meta         json.RawMessage `json:"_meta"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Execution    *struct {
		TaskSupport string `json:"taskSupport"`
	} `json:"execution"`
}

type wireListResult struct {
	Tools      []wireTool `json:"tools"`
	NextCursor string     `json:"nextCursor"`
}

// sync is the two-phase discovery of docs/upstream.md §3.5: fetch the whole list
// (registry untouched), then swap the server's registrations atomically.
// strict makes a registration conflict an error (the activation attempt
// with failOnStartupError); otherwise a conflict leaves the server with no
// tools and is logged and shown in Status.
func (s *Server) sync(gen *generation, strict bool, kinds listKind) error {
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.StartupTimeout)
	defer cancel()
	return s.syncCtx(ctx, gen, strict, kinds)
}

// syncCtx re-fetches the lists of kinds and publishes the server's whole
// offer. Only a failed tools/list fails it (see fetchOthers).
func (s *Server) syncCtx(ctx context.Context, gen *generation, strict bool, kinds listKind) (err error) {
	ctx, end := s.trace(ctx, OpSync, "")
	defer func() { end(err) }()
	// Calls of this sync end with the generation too.
	ctx, stop := mergeCancel(ctx, gen.ctx)
	defer stop()
	s.warned.begin(kinds)
	if kinds&kindTools != 0 {
		defs, err := s.fetchTools(ctx, gen)
		if err != nil {
			return err
		}
		s.listed.tools = defs
	}
	s.fetchOthers(ctx, gen, kinds)
	s.warned.synced(kinds)
	// The swap re-checks that the generation is still alive (docs/decisions.md §8):
	// tools bound to a dead connection must not appear.
	if gen.ended() {
		return fmt.Errorf("connection ended during tool discovery: %w", gen.endErr())
	}
	o := s.screen(s.offer(capabilities(gen)))
	o = s.pinned(o)
	return s.publish(o, strict)
}

// fetchTools lists the server's tools as registry definitions.
func (s *Server) fetchTools(ctx context.Context, gen *generation) ([]tool.Tool, error) {
	listed, err := s.fetch(ctx, gen)
	if err != nil {
		return nil, err
	}
	defs := make([]tool.Tool, 0, len(listed))
	for _, rt := range listed {
		defs = append(defs, tool.Tool{
			Name:         rt.public,
			Description:  rt.description,
			InputSchema:  rt.inputSchema,
			OutputSchema: rt.outputSchema,
			Execute:      s.caller(rt),
			Origin:       tool.Origin{Server: s.cfg.ServerName, Name: rt.raw},
			Title:        rt.title,
			Annotations:  rt.annotations,
			Icons:        rt.icons,
			Meta:         rt.meta,
			Background:   rt.taskRequired || rt.taskOptional,
			ServerTasks:  (rt.taskRequired || rt.taskOptional) && serverDecidesTasks(gen),
			AlwaysLoad:   s.cfg.AlwaysLoad,
		})
	}
	return defs, nil
}

// publish swaps the server's registrations for o. A conflict leaves the
// server with nothing registered, failed in Status; strict returns it.
func (s *Server) publish(o tool.Offer, strict bool) error {
	if err := s.src.PublishOffer(o); err != nil {
		if errors.Is(err, tool.ErrSuperseded) {
			return nil // closing, or taken over by a successor: nothing to show
		}
		s.src.Clear()
		s.mu.Lock()
		s.conflict = "tool registration failed, no tools registered: " + err.Error()
		s.status.State = StateFailed
		s.status.Err = s.conflict
		s.mu.Unlock()
		s.log.Error("tool registration failed, no tools registered", "err", err)
		if strict {
			return err
		}
		return nil
	}
	s.mu.Lock()
	if s.conflict != "" && s.status.State == StateFailed {
		s.status.State = StateReady
		s.status.Err = ""
	}
	s.conflict = ""
	s.mu.Unlock()
	return nil
}

// fetch lists every page of the server's tools and turns them into
// remoteTools with their public names. Any problem fails the whole fetch.
func (s *Server) fetch(ctx context.Context, gen *generation) ([]*remoteTool, error) {
	defer gen.pages.ended()
	var out []*remoteTool
	// The tools' names, those boundTool drops too, for warnUnmatched;
	// gathered only when there is a filter to check.
	var listed []string
	filtered := len(s.cfg.EnabledTools)+len(s.cfg.DisabledTools) > 0
	byName := map[string]*remoteTool{}
	err := paginate(s, s.prefix+": tools/list", "tools", func(cursor string) ([]wireTool, string, int64, error) {
		return s.listPage(ctx, gen, cursor)
	}, func(tools []wireTool) error {
		for _, wt := range tools {
			if filtered {
				listed = append(listed, wt.Name)
			}
			if !s.boundTool(&wt) {
				continue
			}
			rt, err := s.remoteTool(wt)
			if err != nil {
				return err
			}
			if prev, dup := byName[rt.public]; dup {
				if prev.raw == rt.raw {
					return fmt.Errorf("%s: server listed tool %q more than once — invalid tool list", s.prefix, rt.raw)
				}
				return fmt.Errorf("%s: server listed tools %q and %q, which both map to the public name %q — invalid tool list", s.prefix, prev.raw, rt.raw, rt.public)
			}
			byName[rt.public] = rt
			if s.enabled(rt.raw) {
				out = append(out, rt)
			}
		}
		return nil
	})
	if err == nil {
		s.warnUnmatched(listed)
	}
	return out, err
}

// paginate fetches every page of a list method (named by what, for
// errors) through page, from the first, and hands each page's items to
// each. It is bounded, as docs/decisions.md §8 has it: at most maxPages
// pages, no cursor twice, at most MaxCatalogBytes of raw pages in all;
// and at most MaxTools items (noun names them in the error), since every
// item the bridge keeps costs it memory the byte bound alone would let
// reach gigabytes in small items.
func paginate[T any](s *Server, what, noun string, page func(cursor string) (items []T, next string, size int64, err error), each func([]T) error) error {
	var (
		cursor  string
		cursors = map[string]bool{}
		total   int64
		count   int
	)
	for n := 1; ; n++ {
		if n > maxPages {
			return fmt.Errorf("%s returned more than %d pages — giving up on this list", what, maxPages)
		}
		items, next, size, err := page(cursor)
		if err != nil {
			return err
		}
		if total += size; s.opts.MaxCatalogBytes > 0 && total > s.opts.MaxCatalogBytes {
			return fmt.Errorf("%s pages exceed the catalog limit of %d bytes (MaxCatalogBytes) after %d pages — giving up on this list", what, s.opts.MaxCatalogBytes, n)
		}
		if count += len(items); s.opts.MaxTools > 0 && count > s.opts.MaxTools {
			return fmt.Errorf("%s: the server lists more than %d %s, the bridge's limit per server (MaxTools) — giving up on this list", s.prefix, s.opts.MaxTools, noun)
		}
		if err := each(items); err != nil {
			return err
		}
		if next == "" {
			return nil
		}
		if cursors[next] {
			return fmt.Errorf("%s returned the cursor %q twice — the server's pagination does not advance", what, next)
		}
		cursors[next], cursor = true, next
	}
}

// listPage fetches one page, keeping the tools' raw JSON. The SDK is handed
// only the page's tools that may carry x-mcp-header annotations
// (sdkwire.HeaderToolsPage): it needs those to mirror annotated arguments as
// Mcp-Param-* headers on calls (protocol 2026-07-28), and it drops the
// invalid ones, which the bridge then drops too. Every other tool it would
// decode into typed schemas only for the bridge to throw the work away
// (over half of a 10,000-tool discovery). Runs on the supervisor goroutine
// only.
// It also returns the page's raw size.
func (s *Server) listPage(ctx context.Context, gen *generation, cursor string) ([]wireTool, string, int64, error) {
	slot := sdkwire.NewSlot(sdkwire.HeaderToolsPage)
	gen.drops.Clear() // this page's reasons only
	res, err := gen.session.ListTools(sdkwire.WithSlot(ctx, slot), &mcp.ListToolsParams{Cursor: cursor})
	gen.table.Forget(slot)
	if err != nil {
		return nil, "", 0, fmt.Errorf("tools/list: %w", describeCallError(redact.Error(err)))
	}
	raw, ok := slot.Result()
	if ok && listens(gen) {
		gen.pages.put(cursor, raw) // only 2026-07-28 caches
	} else if !ok {
		raw, ok = gen.pages.get(cursor)
	}
	if !ok {
		// Answered from the SDK's cache (newer protocol, server-set TTL),
		// which only holds pages this generation fetched: gen.pages has
		// those of this listing and the one before.
		return nil, "", 0, fmt.Errorf("tools/list: the SDK answered page %q from its cache, which this connection never fetched", cursor)
	}
	var page wireListResult
	if err := json.Unmarshal(raw, &page); err != nil {
		return nil, "", 0, fmt.Errorf("tools/list: invalid result: %w", err)
	}
	return s.dropRefused(gen, page.Tools, res.Tools), page.NextCursor, int64(len(raw)), nil
}

// listedPages holds the raw tools/list pages the SDK may answer from its
// cache (protocol 2026-07-28, while a page's ttlMs lasts), by cursor: the
// listing's under way and, looked up only when the SDK answers from its
// cache, the previous listing's. A page found there is carried into the
// listing under way, so a page the SDK keeps answering from its cache
// stays; the rest of the previous listing goes when this one ends. Kept
// apart by listing, a server whose cursors change at each listing cannot
// grow them past two listings (a large catalog costs its size twice, three
// times during a re-sync).
type listedPages struct {
	cur, prev map[string]json.RawMessage
}

func (p *listedPages) put(cursor string, raw json.RawMessage) {
	if p.cur == nil {
		p.cur = map[string]json.RawMessage{}
	}
	p.cur[cursor] = raw
}

// get returns the previous listing's page for cursor, if any (a listing
// asks for each cursor once).
func (p *listedPages) get(cursor string) (json.RawMessage, bool) {
	raw, ok := p.prev[cursor]
	if ok {
		p.put(cursor, raw)
	}
	return raw, ok
}

// ended ends the listing under way, whether it succeeded or not: a failed
// one's pages are in the SDK's cache as well.
func (p *listedPages) ended() { p.prev, p.cur = p.cur, nil }

// dropRefused removes from tools those the SDK dropped from its own view of
// the page: tools with invalid x-mcp-header annotations, which a client
// MUST NOT use (MCP 2026-07-28, Streamable HTTP transport; the SDK drops
// them whatever the transport). Only tools the SDK was handed can be
// missing from kept (sdkwire.HeaderCandidate).
func (s *Server) dropRefused(gen *generation, tools []wireTool, kept []*mcp.Tool) []wireTool {
	var known map[string]bool
	out := tools[:0]
	for _, wt := range tools {
		if sdkwire.HeaderCandidate(wt.InputSchema) {
			if known == nil {
				known = make(map[string]bool, len(kept))
				for _, t := range kept {
					known[t.Name] = true
				}
			}
			if !known[wt.Name] {
				reason := gen.drops.Take(wt.Name)
				if reason == "" {
					reason = "the SDK refused it"
				}
				s.warnDef(kindTools, "tool ignored: invalid x-mcp-header annotation in its inputSchema", "tool", wt.Name, "reason", reason)
				continue
			}
		}
		out = append(out, wt)
	}
	return out
}

// boundTool applies the per-tool bounds: a description over
// MaxDescriptionBytes is truncated with DescriptionTruncatedMarker; a tool
// whose inputSchema or outputSchema is over MaxSchemaBytes is dropped
// (false). Both are logged.
func (s *Server) boundTool(wt *wireTool) bool {
	if n := max(len(wt.InputSchema), len(wt.OutputSchema)); n > MaxSchemaBytes {
		s.warnDef(kindTools, "tool ignored: schema too large", "tool", wt.Name, "bytes", n, "limit", MaxSchemaBytes)
		return false
	}
	if !utf8.Valid(wt.InputSchema) || !utf8.Valid(wt.OutputSchema) {
		// Kept as the server sent it, it would reach every model request
		// as it is, and an API refuses a body that is not UTF-8: one tool
		// would fail every turn.
		s.warnDef(kindTools, "tool ignored: schema is not valid UTF-8", "tool", wt.Name)
		return false
	}
	if !utf8.Valid(wt.Annotations) || !utf8.Valid(wt.Meta) {
		s.warnDef(kindTools, "tool annotations and _meta dropped: not valid UTF-8", "tool", wt.Name)
		wt.Annotations, wt.Meta = nil, nil
	}
	if n := len(wt.Description); n > MaxDescriptionBytes {
		wt.Description = textcut.Marked(wt.Description, MaxDescriptionBytes, DescriptionTruncatedMarker)
		s.warnDef(kindTools, "tool description truncated", "tool", wt.Name, "bytes", n, "limit", MaxDescriptionBytes)
	}
	return true
}

func (s *Server) remoteTool(wt wireTool) (*remoteTool, error) {
	if !isJSONObject(wt.InputSchema) {
		return nil, fmt.Errorf("%s: tool %q has no inputSchema object — invalid tool list", s.prefix, wt.Name)
	}
	rt := &remoteTool{
		raw:          wt.Name,
		public:       naming.Public(s.cfg.ServerName, wt.Name),
		title:        wt.Title,
		description:  wt.Description,
		inputSchema:  wt.InputSchema,
		taskRequired: wt.Execution != nil && wt.Execution.TaskSupport == "required",
		taskOptional: wt.Execution != nil && wt.Execution.TaskSupport == "optional",
		icons:        s.icons(wt.Name, wt.Icons),
	}
	if isJSONObject(wt.Annotations) {
		rt.annotations = wt.Annotations
	}
	if len(wt.Meta) > MaxSchemaBytes {
		s.warnDef(kindTools, "tool _meta dropped: too large", "tool", wt.Name, "bytes", len(wt.Meta), "limit", MaxSchemaBytes)
	} else if isJSONObject(wt.Meta) {
		rt.meta = wt.Meta
	}
	if len(wt.OutputSchema) > 0 && string(wt.OutputSchema) != "null" {
		rt.outputSchema = wt.OutputSchema
		rt.output = newOutputValidator(wt.OutputSchema, func(err error) {
			s.log.Warn("outputSchema does not compile; the tool's structuredContent is not checked", "tool", wt.Name, "err", err)
		})
	}
	return rt, nil
}

// enabled applies enabledTools / disabledTools.
func (s *Server) enabled(raw string) bool {
	if len(s.cfg.EnabledTools) > 0 {
		return slices.Contains(s.cfg.EnabledTools, raw)
	}
	return !slices.Contains(s.cfg.DisabledTools, raw)
}

func isJSONObject(b json.RawMessage) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return true
		default:
			return false
		}
	}
	return false
}

// mergeCancel returns a context that is done when either ctx or other is.
func mergeCancel(ctx, other context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(other, func() { cancel(context.Cause(other)) })
	return ctx, func() {
		stop()
		cancel(errors.New("done"))
	}
}
