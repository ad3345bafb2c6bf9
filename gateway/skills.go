package gateway

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/tool"
)

// Skills over MCP (the skills extension, SEP-2640 draft). The gateway
// declares io.modelcontextprotocol/skills (with directoryRead) when a
// backend offers skills, answers skills/list, skills/get and
// resources/directory/read beneath the SDK (which has none of them)
// from the registry's skills, and serves their files as resources. As a
// tool is namespaced by its server, so is a skill: the backend's
// skill://<path> is skill://<server>/<path> here, whose last path segment
// is still the skill's name; the entry's frontmatter, digests and sizes
// are the backend's, unchanged, so a client verifies what it reads against
// the backend's own listing. Each SKILL.md is listed in resources/list
// (name and description from its frontmatter); the other files are read
// through one resource template per server. A read passes the Gate as any
// resources/read does; a file is subscribed to as any resource is, at its
// backend under the backend's URI, its updates sent under the served one. The backend's own skill:// resources are not
// listed a second time under their old URIs, and no backend's ordinary
// resource or template takes a part of the skill:// space
// (outsideSkillSpace).

// skillsExtension is the extension's identifier in capabilities.extensions.
const skillsExtension = "io.modelcontextprotocol/skills"

// skillScheme is the scheme the gateway namespaces.
const skillScheme = "skill://"

// servedSkillURI is the gateway's URI of the backend server's skill file
// uri: skill:// URIs gain the server as their first segment; others are
// served as they are.
func servedSkillURI(server, uri string) string {
	rest, ok := strings.CutPrefix(uri, skillScheme)
	if !ok {
		return uri
	}
	return skillScheme + server + "/" + rest
}

// backendSkillURI is the backend's URI of the gateway's skill file uri of
// server; false when uri is not under the server's namespace.
func backendSkillURI(server, uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, skillScheme+server+"/")
	if !ok || rest == "" {
		return "", false
	}
	return skillScheme + rest, true
}

// skillEntry is s's entry as the gateway lists it: the backend's, with
// the URIs namespaced.
func skillEntry(s tool.Skill) json.RawMessage {
	var e map[string]json.RawMessage
	if json.Unmarshal(s.Wire, &e) != nil {
		e = map[string]json.RawMessage{"frontmatter": s.Frontmatter}
	}
	e["uri"], _ = json.Marshal(servedSkillURI(s.Origin.Server, s.URI))
	if s.Dynamic {
		e["resources"] = json.RawMessage(`"dynamic"`)
	} else {
		files := make([]tool.SkillFile, len(s.Files))
		for i, f := range s.Files {
			files[i] = f
			files[i].URI = servedSkillURI(s.Origin.Server, f.URI)
		}
		e["resources"], _ = json.Marshal(files)
	}
	raw, _ := json.Marshal(e)
	return raw
}

// skillsBody answers skills/list, skills/get and resources/directory/read; nil for any other
// method. The caller (its HTTP header, nil off HTTP, and session) sees
// the skills of the servers whose resources the Gate's Screen shows it.
func (g *Gateway) skillsBody(req *jsonrpc.Request, header http.Header, session string) sdkwire.TakenCall {
	switch req.Method {
	case "skills/list":
		return func(ctx context.Context) (json.RawMessage, error) {
			return g.listSkills(g.skillScreen(ctx, header, session)), nil
		}
	case "skills/get":
		return func(ctx context.Context) (json.RawMessage, error) {
			return g.getSkill(req.Params, g.skillScreen(ctx, header, session))
		}
	case methodDirectoryRead:
		return func(ctx context.Context) (json.RawMessage, error) {
			return g.readSkillDirectory(req.Params, g.skillScreen(ctx, header, session))
		}
	}
	return nil
}

// methodDirectoryRead lists a directory's children (the extension's
// directoryRead, which the gateway declares): the directories of the
// skills whose files are listed.
const methodDirectoryRead = "resources/directory/read"

// readSkillDirectory is the resources/directory/read result for params'
// uri: the direct children of a directory of the visible listed skills'
// files (a subdirectory with mimeType inode/directory), all in one page;
// -32602 for a URI that is no such directory.
func (g *Gateway) readSkillDirectory(params json.RawMessage, visible func(server string) bool) (json.RawMessage, error) {
	var p struct {
		URI string `json:"uri"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.URI == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: methodDirectoryRead + `: params need a "uri" string naming a directory`}
	}
	var files []string
	for _, s := range g.visibleSkills(visible) {
		for _, f := range s.Files {
			files = append(files, servedSkillURI(s.Origin.Server, f.URI))
		}
	}
	children := directoryChildren(strings.TrimSuffix(p.URI, "/"), files)
	if children == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: methodDirectoryRead + ": " + p.URI + " is not a directory of a listed skill's files"}
	}
	raw, _ := json.Marshal(map[string]any{"resources": children, "resultType": "complete", "ttlMs": 0, "cacheScope": "private"})
	return raw, nil
}

// directoryChildren are the direct children of dir among files (URIs),
// each once, in the order first met; nil when no file is under dir.
func directoryChildren(dir string, files []string) []map[string]string {
	var out []map[string]string
	seen := map[string]bool{}
	for _, f := range files {
		rest, ok := strings.CutPrefix(f, dir+"/")
		if !ok || rest == "" {
			continue
		}
		child := map[string]string{"uri": f, "name": rest, "mimeType": "text/markdown"}
		if name, _, sub := strings.Cut(rest, "/"); sub {
			child = map[string]string{"uri": dir + "/" + name, "name": name, "mimeType": "inode/directory"}
		} else if !strings.HasSuffix(rest, ".md") {
			delete(child, "mimeType")
		}
		if !seen[child["uri"]] {
			seen[child["uri"]] = true
			out = append(out, child)
		}
	}
	return out
}

// skillScreen returns whether the caller may see the skills of a server:
// when it may see the server's resources (a Screen's OfferResource), or
// always without a Screen.
func (g *Gateway) skillScreen(ctx context.Context, header http.Header, session string) func(server string) bool {
	see := g.visibleTo(ctx, header, session)
	return func(server string) bool { return see(OfferResource, server) }
}

// visibleSkills are the registry's skills of the servers visible says.
func (g *Gateway) visibleSkills(visible func(server string) bool) []tool.Skill {
	skills := g.reg.Skills()
	return slices.DeleteFunc(skills, func(s tool.Skill) bool { return !visible(s.Origin.Server) })
}

// listSkills is the skills/list result: every visible skill in one page
// (an entry is never split, and the registry holds them all already).
func (g *Gateway) listSkills(visible func(server string) bool) json.RawMessage {
	skills := g.visibleSkills(visible)
	entries := make([]json.RawMessage, len(skills))
	for i, s := range skills {
		entries[i] = skillEntry(s)
	}
	raw, _ := json.Marshal(map[string]any{"skills": entries, "resultType": "complete", "ttlMs": 0, "cacheScope": "private"})
	return raw
}

// getSkill is the skills/get result for params' uri, or -32602 when no
// visible skill of the gateway has that URI (a hidden one is answered as
// one that does not exist).
func (g *Gateway) getSkill(params json.RawMessage, visible func(server string) bool) (json.RawMessage, error) {
	var p struct {
		URI string `json:"uri"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.URI == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `skills/get: params need a "uri" string naming a skill's SKILL.md`}
	}
	for _, s := range g.visibleSkills(visible) {
		if servedSkillURI(s.Origin.Server, s.URI) == p.URI {
			raw, _ := json.Marshal(map[string]any{"skill": skillEntry(s), "resultType": "complete", "ttlMs": 0, "cacheScope": "private"})
			return raw, nil
		}
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "skills/get: no skill has the URI " + p.URI + " (skills/list lists them)"}
}

// declareSkillsExtension declares the extension in caps, on a copy of its
// extensions (the SDK's map may be shared), when a backend offers skills
// or the backends have not settled yet.
func (g *Gateway) declareSkillsExtension(caps *mcp.ServerCapabilities) {
	if caps == nil || (g.isReady() && len(g.reg.Skills()) == 0) {
		return
	}
	ext := maps.Clone(caps.Extensions)
	if ext == nil {
		ext = map[string]any{}
	}
	ext[skillsExtension] = map[string]any{"directoryRead": true}
	caps.Extensions = ext
}

// skillResources are the resources the gateway lists for the skills:
// each SKILL.md under its served URI.
func skillResources(skills []tool.Skill) []tool.Resource {
	out := make([]tool.Resource, 0, len(skills))
	for _, s := range skills {
		if !strings.HasPrefix(s.URI, skillScheme) {
			continue // not namespaced: its server's resource of that URI serves it
		}
		out = append(out, tool.Resource{Server: s.Origin.Server, URI: servedSkillURI(s.Origin.Server, s.URI),
			Name: s.Origin.Name, Description: s.Description, MIMEType: "text/markdown", Wire: s.Wire})
	}
	return out
}

// skillTemplates are the templates through which the other skill files of
// each server are read: skill://<server>/{+path}.
func skillTemplates(skills []tool.Skill) []tool.ResourceTemplate {
	seen := map[string]bool{}
	var out []tool.ResourceTemplate
	for _, s := range skills {
		if seen[s.Origin.Server] {
			continue
		}
		seen[s.Origin.Server] = true
		out = append(out, tool.ResourceTemplate{Server: s.Origin.Server, URITemplate: skillTemplate(s.Origin.Server),
			Name: s.Origin.Server + " skill files", Description: "Files of the skills of " + s.Origin.Server, Wire: json.RawMessage(`{}`)})
	}
	return out
}

// skillTemplate is the URI template of server's skill files.
func skillTemplate(server string) string { return skillScheme + server + "/{+path}" }

// skillFileAt is the server of uri, a file under a part of the skill://
// space the gateway serves (skill://<server>/…, whose reads its template
// takes to the server), and the server's own URI for it; false for a URI
// outside every served part. syncMu must be held.
func (g *Gateway) skillFileAt(uri string) (server, at string, ok bool) {
	rest, isSkill := strings.CutPrefix(uri, skillScheme)
	if !isSkill {
		return "", "", false
	}
	server, _, _ = strings.Cut(rest, "/")
	if g.offers.skillServer[skillTemplate(server)] != server {
		return "", "", false
	}
	at, ok = backendSkillURI(server, uri)
	return server, at, ok
}

// withoutSkillFiles drops the resources that are a listed skill's files
// at their backend's skill:// URIs: the gateway serves them under its
// own. A file of another scheme is served (and read) as the resource it
// is.
func withoutSkillFiles(res []tool.Resource, skills []tool.Skill) []tool.Resource {
	files := map[string]bool{}
	note := func(server, uri string) {
		if strings.HasPrefix(uri, skillScheme) {
			files[server+"\x00"+uri] = true
		}
	}
	for _, s := range skills {
		note(s.Origin.Server, s.URI)
		for _, f := range s.Files {
			note(s.Origin.Server, f.URI)
		}
	}
	if len(files) == 0 {
		return res
	}
	out := res[:0:0]
	for _, r := range res {
		if !files[r.Server+"\x00"+r.URI] {
			out = append(out, r)
		}
	}
	return out
}

// skillSpace is who owns the parts of the gateway's skill:// space,
// skill://<server>/…: every server the gateway knows (none may take
// another's part), and the skills listed.
type skillSpace struct {
	skills []tool.Skill
	lists  map[string]bool // servers that list skills
	known  map[string]bool // every server named by the config's order or an offer
}

// newSkillSpace reads who owns what from the registry: the servers of
// order, of tools and of every offer.
func (g *Gateway) newSkillSpace(order []string, tools []tool.Tool) skillSpace {
	sp := skillSpace{skills: g.reg.Skills(), lists: map[string]bool{}, known: map[string]bool{}}
	for _, s := range sp.skills {
		sp.lists[s.Origin.Server], sp.known[s.Origin.Server] = true, true
	}
	for _, name := range order {
		sp.known[name] = true
	}
	for _, t := range tools {
		sp.known[t.Origin.Server] = true
	}
	for _, r := range g.reg.Resources() {
		sp.known[r.Server] = true
	}
	for _, t := range g.reg.ResourceTemplates() {
		sp.known[t.Server] = true
	}
	for _, p := range g.reg.Prompts() {
		sp.known[p.Origin.Server] = true
	}
	return sp
}

// claims reports whether server's ordinary resource or template uri (a
// URI template for a template) takes a part of the skill space that is
// not its own to take: another known server's part, a variable where the
// server goes (it would match every server's files), or its own part
// while it lists skills (which fill it). A skill:// URI whose first part
// names no server (skill://pdf-processing/SKILL.md from a server without
// the extension) is served as it is.
func (sp skillSpace) claims(server, uri string) bool {
	rest, isSkill := strings.CutPrefix(uri, skillScheme)
	if !isSkill {
		return false
	}
	part, _, _ := strings.Cut(rest, "/")
	switch {
	case strings.Contains(part, "{"):
		return true
	case part == server:
		return sp.lists[server]
	}
	return sp.known[part]
}

// outsideSkillSpace drops the ordinary resources or templates (uriOf
// gives each one's URI or URI template, and server) that claim a part of
// the gateway's skill:// space (skillSpace.claims): each would serve its
// content as another server's skill (the SDK keeps one handler per URI:
// the last added). Each one dropped is logged once.
func outsideSkillSpace[T any](g *Gateway, kind string, items []T, space skillSpace, uriOf func(T) (uri, server string)) []T {
	out := items[:0:0]
	for _, it := range items {
		uri, server := uriOf(it)
		if space.claims(server, uri) {
			g.reportOnce(kind+" "+uri+" "+server, kind+" not served: it takes a part of the skill:// space that is another server's (skill://<server>/… holds each server's skills)",
				kind, uri, "server", server)
			continue
		}
		out = append(out, it)
	}
	return out
}

// syncSkills makes the served skill resources and templates equal the
// registry's skills. syncMu must be held.
func (g *Gateway) syncSkills(rank func(a, b string) int) {
	skills := g.reg.Skills()
	var files, tpls map[string]string
	g.offers.skillFiles, files = syncByURI(g, "skill", skillResources(skills), g.offers.skillFiles, rank,
		func(r tool.Resource) (string, string, json.RawMessage) { return r.URI, r.Server, r.Wire },
		func(r tool.Resource) {
			g.server.AddResource(&mcp.Resource{URI: r.URI, Name: r.Name, Description: r.Description, MIMEType: r.MIMEType}, g.skillReader(r.Server))
		}, g.server.RemoveResources)
	g.offers.skillTpls, tpls = syncByURI(g, "skill template", skillTemplates(skills), g.offers.skillTpls, rank,
		func(t tool.ResourceTemplate) (string, string, json.RawMessage) {
			return t.URITemplate, t.Server, t.Wire
		},
		func(t tool.ResourceTemplate) {
			g.server.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: t.URITemplate, Name: t.Name, Description: t.Description}, g.skillReader(t.Server))
		}, g.server.RemoveResourceTemplates)
	maps.Copy(files, tpls)
	g.offers.skillServer = files
}

// skillReader reads server's skill files by their served URIs: the read
// goes to the backend under its own URI (through read, so the Gate
// sees it), and the contents, or a hidden file's not found, come back
// under the served one.
func (g *Gateway) skillReader(server string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		served := req.Params.URI
		uri, ok := backendSkillURI(server, served)
		if !ok {
			return nil, mcp.ResourceNotFoundError(served)
		}
		params := *req.Params
		params.URI = uri
		back := *req
		back.Params = &params
		res, err := g.read(ctx, server, &back, served)
		if err != nil {
			return nil, err
		}
		for _, c := range res.Contents {
			if c != nil && c.URI == uri {
				c.URI = served
			}
		}
		return res, nil
	}
}

// takeSkills returns next with the skills requests taken first, on every
// connection: stdio's and in memory, and a stateful or stateless HTTP
// session's, whose request headers reach the Gate's Screen. Each waits
// for the backends' readiness as the SDK's requests do (heldUntilReady).
// One before initialize is the SDK's to refuse, as any other request.
func (g *Gateway) takeSkills(session *atomic.Pointer[mcp.ServerSession], next func(*jsonrpc.Request) sdkwire.TakenCall) func(*jsonrpc.Request) sdkwire.TakenCall {
	return func(req *jsonrpc.Request) sdkwire.TakenCall {
		ss := session.Load()
		// The method first: the initialize check may parse params' _meta.
		if body := g.skillsBody(req, headerOf(req), sessionID(ss)); body != nil && !refusedUninitialized(ss, req) {
			return g.heldUntilReady(ss, req, body)
		}
		return next(req)
	}
}
