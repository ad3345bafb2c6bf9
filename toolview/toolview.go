// Package toolview keeps a model's context small when a registry holds
// more tools than it should see: deferred loading through a search_tools
// tool.
//
// A [View] is what a harness reads before each model request
// ([View.Tools]). While search is off it is the whole catalog. While it is
// on, it is the pinned tools (by name or glob, or every tool of an
// always-loaded server), search_tools, and every tool an earlier
// search_tools call returned: search_tools ranks the catalog with
// toolsearch, answers the matches' names, descriptions and schemas, and
// loads them, so that the model can call them from its next request on.
// Loaded tools stay loaded for the life of the View, and the view never
// hides a tool it has shown: a call in flight always finds its tool. Only
// a tool its server stops listing (while it lists others) is forgotten.
//
// In ModeAuto search turns on once the catalog's definitions (counted with
// package tokens) exceed the threshold, and then stays on, so that
// search_tools never vanishes mid-session.
//
// Always visible, besides the pinned names and globs of Config: the tools
// of the servers in Config.AlwaysLoad, and every tool marked
// tool.Tool.AlwaysLoad (an mcp-client entry's alwaysLoad: true).
//
// A server with many clients keeps a [Session] per client: each loads its
// own tools over the one View (the gateway does, through Options.NewView).
package toolview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"sync"

	"github.com/mcpbridge/mcpbridge/chattools"
	"github.com/mcpbridge/mcpbridge/tokens"
	"github.com/mcpbridge/mcpbridge/tool"
	"github.com/mcpbridge/mcpbridge/toolsearch"
)

// SearchName is the search tool's name; it never starts with mcp__, so it
// never collides with a server's tool.
const SearchName = "search_tools"

// Mode says when search is on.
type Mode string

// The modes.
const (
	ModeAuto Mode = "auto" // on once the catalog exceeds the threshold
	ModeOn   Mode = "on"
	ModeOff  Mode = "off"
)

// DefaultContextWindow is the context window, in tokens, that the default
// threshold is a share of (DeepSeek V3's and GPT-4o's: 128K).
const DefaultContextWindow = 128_000

// Search limits: the default and the most one call loads.
const (
	DefaultLimit = 5
	MaxLimit     = 20
)

// Config says when search is on and which tools the model always sees.
type Config struct {
	Mode Mode // "" is ModeAuto
	// Threshold is the catalog size in tokens above which ModeAuto turns
	// search on; 0 means 10% of ContextWindow.
	Threshold int
	// ContextWindow is the model's context in tokens; 0 means
	// DefaultContextWindow.
	ContextWindow int
	// Pinned are tool names or path.Match globs ("mcp__github__*") the
	// model always sees.
	Pinned []string
	// AlwaysLoad are servers (tool.Origin.Server) whose tools the model
	// always sees.
	AlwaysLoad []string
}

// Check reports the first invalid field.
func (c Config) Check() error {
	switch c.Mode {
	case "", ModeAuto, ModeOn, ModeOff:
	default:
		return fmt.Errorf("mode %q: want auto, on or off", c.Mode)
	}
	if c.Threshold < 0 {
		return fmt.Errorf("threshold %d: want a number of tokens >= 0", c.Threshold)
	}
	if c.ContextWindow < 0 {
		return fmt.Errorf("contextWindow %d: want a number of tokens >= 0", c.ContextWindow)
	}
	for _, p := range c.Pinned {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("pinned %q: %w", p, err)
		}
	}
	return nil
}

// threshold returns the effective threshold in tokens.
func (c Config) threshold() int {
	if c.Threshold > 0 {
		return c.Threshold
	}
	w := c.ContextWindow
	if w == 0 {
		w = DefaultContextWindow
	}
	return w / 10
}

// View is the model-visible part of a registry. Its methods are safe for
// concurrent use.
type View struct {
	reg *tool.Registry
	cfg Config
	src *tool.Source // holds search_tools; nil in ModeOff

	mu      sync.Mutex
	on      bool      // search is on (sticky in ModeAuto)
	sel     selection // what the view's own model was given
	index   *toolsearch.Index
	indexed uint64 // the registry version index was built at
	sizes   map[string]sized
	checked map[string]bool // the pins Unmatched has checked
}

// selection is what one model was given: the tools search_tools loaded
// for it and the tools a view showed it while on, each with its server
// (tool.Origin.Server).
type selection struct {
	loaded, shown map[string]string
	pruned        uint64 // the registry version prune last ran at
}

func newSelection() selection {
	return selection{loaded: map[string]string{}, shown: map[string]string{}}
}

// prune forgets the tools that catalog, the registry at version ver, lacks
// while their server is in it: the server stopped listing them. A tool
// whose server is away (restarting) stays for its return. Without it a
// server renaming its tools at each re-sync grew the selection forever.
func (s *selection) prune(catalog []tool.Tool, ver uint64) {
	if s.pruned == ver {
		return
	}
	s.pruned = ver
	listed := make(map[string]bool, len(catalog))
	servers := map[string]bool{}
	for _, t := range catalog {
		listed[t.Name], servers[t.Origin.Server] = true, true
	}
	for _, m := range []map[string]string{s.loaded, s.shown} {
		maps.DeleteFunc(m, func(name, server string) bool { return servers[server] && !listed[name] })
	}
}

// has reports whether the model was given the tool named name.
func (s *selection) has(name string) bool {
	_, loaded := s.loaded[name]
	_, shown := s.shown[name]
	return loaded || shown
}

// names returns the loaded tools' names, sorted.
func (s *selection) names() []string {
	return slices.Sorted(maps.Keys(s.loaded))
}

// sized caches one definition's tokens, valid while the tool is the same.
type sized struct {
	tool   tool.Tool
	tokens int
}

// New returns a view of reg and, unless cfg.Mode is off, registers
// search_tools in it (so that Registry.Execute runs it like any tool).
func New(reg *tool.Registry, cfg Config) (*View, error) {
	return NewIn(reg.NewSource(), cfg)
}

// NewIn is New publishing search_tools through src, for a host plugin
// whose tools must go through the Source the host gave it.
func NewIn(src *tool.Source, cfg Config) (*View, error) {
	if err := cfg.Check(); err != nil {
		return nil, fmt.Errorf("toolSearch: %w", err)
	}
	v := &View{reg: src.Registry(), cfg: cfg, sel: newSelection(), sizes: map[string]sized{}, checked: map[string]bool{}}
	if cfg.Mode == ModeOff {
		return v, nil
	}
	v.on = cfg.Mode == ModeOn
	if err := src.Publish(v.searchTool()); err != nil {
		return nil, fmt.Errorf("toolSearch: register %s: %w", SearchName, err)
	}
	v.src = src
	return v, nil
}

// Close removes search_tools from the registry; idempotent.
func (v *View) Close() {
	if v.src != nil {
		v.src.Close()
	}
}

// On reports whether search is on, deciding ModeAuto on the current
// catalog.
func (v *View) On() (bool, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.decideLocked(v.reg.List())
}

// decideLocked turns ModeAuto on when catalog's definitions (search_tools
// left out) exceed the threshold.
func (v *View) decideLocked(catalog []tool.Tool) (bool, error) {
	if v.on || v.cfg.Mode != "" && v.cfg.Mode != ModeAuto {
		return v.on, nil
	}
	n, err := v.catalogTokensLocked(catalog)
	if err != nil {
		return false, err
	}
	v.on = n > v.cfg.threshold()
	return v.on, nil
}

// CatalogTokens returns the tokens of every definition in the registry but
// search_tools': what the model would see with search off.
func (v *View) CatalogTokens() (int, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.catalogTokensLocked(v.reg.List())
}

// catalogTokensLocked sums catalog's definitions, counting each tool once
// per version; the cache keeps only the tools of this catalog, so it stays
// as large as the registry.
func (v *View) catalogTokensLocked(catalog []tool.Tool) (int, error) {
	sum := 0
	next := make(map[string]sized, len(catalog))
	for _, t := range catalog {
		if t.Name == SearchName && v.src != nil {
			continue
		}
		s, ok := v.sizes[t.Name]
		if !ok || !sameDefinition(s.tool, t) {
			n, err := tokens.Tool(t)
			if err != nil {
				return 0, err
			}
			s = sized{tool: t, tokens: n}
		}
		next[t.Name] = s
		sum += s.tokens
	}
	v.sizes = next
	return sum, nil
}

func sameDefinition(a, b tool.Tool) bool {
	return a.Description == b.Description && string(a.InputSchema) == string(b.InputSchema)
}

// Tools returns the tools the model sees now, in the registry's order:
// the whole catalog while search is off; else the pinned and always-loaded
// tools, search_tools, the loaded tools, and every tool shown before.
func (v *View) Tools() ([]tool.Tool, error) {
	return v.toolsFor(&v.sel)
}

// toolsFor is Tools for the model given sel (the View's own, or a
// Session's, which its lock guards).
func (v *View) toolsFor(sel *selection) ([]tool.Tool, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	ver := v.reg.Version() // before List: a change between is pruned again
	all := v.reg.List()
	on, err := v.decideLocked(all)
	if err != nil {
		return nil, err
	}
	if !on {
		return v.withoutSearch(all), nil // search_tools stays hidden until search turns on
	}
	sel.prune(all, ver)
	out := all[:0]
	for _, t := range all {
		if t.Name == SearchName || sel.has(t.Name) || v.pinned(t) {
			sel.shown[t.Name] = t.Origin.Server
			out = append(out, t)
		}
	}
	return out, nil
}

// pinned reports whether the model always sees t.
func (v *View) pinned(t tool.Tool) bool {
	if t.AlwaysLoad || slices.Contains(v.cfg.AlwaysLoad, t.Origin.Server) && t.Origin.Server != "" {
		return true
	}
	return slices.ContainsFunc(v.cfg.Pinned, func(p string) bool { return matches(p, t.Name) })
}

// Inherit makes the tools old loaded and showed loaded and shown in v,
// and keeps search on if it was: a config reload replaces a view without
// taking a tool away from the model.
func (v *View) Inherit(old *View) {
	old.mu.Lock()
	loaded, shown, on := maps.Clone(old.sel.loaded), maps.Clone(old.sel.shown), old.on
	old.mu.Unlock()
	v.mu.Lock()
	defer v.mu.Unlock()
	maps.Copy(v.sel.loaded, loaded)
	maps.Copy(v.sel.shown, shown)
	v.on = v.on || on && v.src != nil
}

// Loaded returns the names search_tools has loaded, sorted.
func (v *View) Loaded() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.sel.names()
}

// Found is one match of search_tools, as the model reads it: the
// chat-completions function it can call from now on.
type Found struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// MaxQueryBytes bounds a search's query (toolsearch.MaxQueryBytes); a
// search also runs under the view's lock.
const MaxQueryBytes = toolsearch.MaxQueryBytes

// Search ranks the catalog (search_tools left out) for query, loads the
// limit best matches and returns them, best first. limit <= 0 means
// DefaultLimit; more than MaxLimit is MaxLimit.
func (v *View) Search(query string, limit int) ([]Found, error) {
	found, _, err := v.searchFor(&v.sel, noLock{}, query, limit, nil)
	return found, err
}

// noLock is the lock of the View's own selection: v.mu alone guards it.
type noLock struct{}

func (noLock) Lock()   {}
func (noLock) Unlock() {}

// searchFor is Search loading into sel, which selMu guards (a Session's
// lock); grew reports a match sel had neither loaded nor been shown.
// allowed, when not nil, leaves out the tools the caller may not use
// (tool.Visible), before the limit applies. allowed runs outside every
// lock: a gateway's policy may take its time, and every list waits on
// v.mu.
func (v *View) searchFor(sel *selection, selMu sync.Locker, query string, limit int, allowed func(string) bool) ([]Found, bool, error) {
	if query == "" {
		return nil, false, errors.New("query is empty: describe the tool you need")
	}
	if len(query) > MaxQueryBytes {
		// Searched under the view's lock, which every list waits on.
		return nil, false, fmt.Errorf("query is %d bytes: describe the tool you need in a sentence or two (at most %d bytes)", len(query), MaxQueryBytes)
	}
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	selMu.Lock()
	ranked := v.rank(sel, query, limit, allowed != nil)
	selMu.Unlock()
	tools := v.pick(ranked, limit, allowed)
	selMu.Lock()
	defer selMu.Unlock()
	return foundOf(tools), v.load(sel, tools), nil
}

// rank returns the best matches of query, best first: limit of them, or
// all when filtered (the best allowed may rank low).
func (v *View) rank(sel *selection, query string, limit int, filtered bool) []toolsearch.Match {
	v.mu.Lock()
	defer v.mu.Unlock()
	if ver := v.reg.Version(); v.index == nil || v.indexed != ver || sel.pruned != ver {
		all := v.reg.List()
		sel.prune(all, ver) // a model that only searches loads as one that lists
		if v.index == nil || v.indexed != ver {
			v.index, v.indexed = toolsearch.New(v.withoutSearch(all)), ver
		}
	}
	if filtered {
		limit = v.reg.Len()
	}
	return v.index.Search(query, limit)
}

// pick returns the first limit tools of ranked that are still registered
// and allowed (nil: all are).
func (v *View) pick(ranked []toolsearch.Match, limit int, allowed func(string) bool) []tool.Tool {
	var out []tool.Tool
	for _, m := range ranked {
		if len(out) == limit {
			break
		}
		t, ok := v.reg.Get(m.Name)
		if !ok || allowed != nil && !allowed(t.Name) {
			continue // gone since the index was built, or not the caller's
		}
		out = append(out, t)
	}
	return out
}

// load loads tools into sel and reports whether one was new to it.
func (v *View) load(sel *selection, tools []tool.Tool) (grew bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, t := range tools {
		grew = grew || !sel.has(t.Name)
		sel.loaded[t.Name] = t.Origin.Server
	}
	return grew
}

// foundOf returns tools as search_tools answers them.
func foundOf(tools []tool.Tool) []Found {
	out := make([]Found, 0, len(tools))
	for _, t := range tools {
		c := chattools.Of(t).Function
		out = append(out, Found{Name: c.Name, Description: c.Description, Parameters: c.Parameters})
	}
	return out
}

// withoutSearch returns tools, the registry's, without v's search_tools.
func (v *View) withoutSearch(tools []tool.Tool) []tool.Tool {
	return slices.DeleteFunc(tools, func(t tool.Tool) bool { return v.src != nil && t.Name == SearchName })
}

// searchTool is search_tools, answering through v.
func (v *View) searchTool() tool.Tool {
	return tool.Tool{
		Name: SearchName,
		Description: "Search the available tools by what you want to do, in plain words (\"create a GitHub issue\", " +
			"\"take a screenshot of a web page\"). Returns the best matching tools with their parameters; " +
			"they become callable from your next step on. Search again with other words if none fits.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"query":{"type":"string","description":"What the tool should do, in plain words."},` +
			`"limit":{"type":"integer","minimum":1,"maximum":20,"description":"How many tools to return (default 5)."}},` +
			`"required":["query"],"additionalProperties":false}`),
		Annotations: json.RawMessage(`{"readOnlyHint":true}`),
		Execute:     v.execute,
	}
}

// execute runs search_tools, loading into the Session ctx carries (a
// gateway's client session), else into the View's own model.
func (v *View) execute(ctx context.Context, args json.RawMessage) (tool.Output, error) {
	var in struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return tool.Output{}, fmt.Errorf("invalid arguments: %w", err)
	}
	var found []Found
	var err error
	if s, ok := ctx.Value(sessionKey{}).(*Session); ok {
		found, err = s.search(v, in.Query, in.Limit, tool.Visible(ctx))
	} else {
		found, _, err = v.searchFor(&v.sel, noLock{}, in.Query, in.Limit, tool.Visible(ctx))
	}
	if err != nil {
		return tool.Output{}, err
	}
	b, err := json.Marshal(struct {
		Tools []Found `json:"tools"`
	}{found})
	if err != nil {
		return tool.Output{}, err
	}
	return tool.Output{Content: []tool.Content{tool.Text(string(b))}, Value: b}, nil
}
