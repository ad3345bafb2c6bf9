package importconf

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
)

// fromMCPServers reads the mcpServers object of a JSON config. The
// file's other keys (a settings file holds much besides servers) are no
// concern of mcpbridge's and are left alone.
func fromMCPServers(filename string, data []byte) ([]*server, []Note, map[Pos]string, error) {
	root, err := jsonTree(filename, data)
	if err != nil {
		return nil, nil, nil, err
	}
	if root.Kind != yaml.MappingNode {
		return nil, nil, nil, fmt.Errorf("%s:%d:%d: a JSON config must be an object with \"mcpServers\"", filename, root.Line, root.Column)
	}
	projectNotes := projectServers(root)
	servers := lookup(root, "mcpServers")
	if servers == nil && len(projectNotes) > 0 {
		servers = &yaml.Node{Kind: yaml.MappingNode}
	}
	if servers == nil {
		return nil, nil, nil, noServers(filename, root)
	}
	if servers.Kind != yaml.MappingNode {
		return nil, nil, nil, fmt.Errorf("%s:%d:%d: mcpServers must be an object of servers, got %s", filename, servers.Line, servers.Column, yamlconf.Describe(servers))
	}
	c := &converter{root: "mcpServers", notes: projectNotes}
	var out []*server
	for i := 0; i+1 < len(servers.Content); i += 2 {
		out = append(out, c.jsonServer(servers.Content[i], servers.Content[i+1]))
	}
	paths := map[Pos]string{}
	treePaths(root, "", paths)
	return out, c.notes, paths, nil
}

// noServers is the error of a JSON config without mcpServers: VS Code's
// (servers, or mcp.servers in its settings.json) is told apart, with how
// to bring its servers over, each one's object being the same.
func noServers(filename string, root *yaml.Node) error {
	path, vscode := "servers", lookup(root, "servers")
	if mcp := lookup(root, "mcp"); vscode == nil && mcp != nil {
		path, vscode = "mcp.servers", lookup(mcp, "servers")
	}
	if vscode != nil && vscode.Kind == yaml.MappingNode {
		return fmt.Errorf("%s:%d:%d: %s: VS Code's MCP servers are not read: add each one with mcpbridge add-json NAME '{…}', its object as it is, "+
			"with ${VAR} for a ${input:ID} in it (or copy them into a file of their own under \"mcpServers\")", filename, vscode.Line, vscode.Column, path)
	}
	return fmt.Errorf("%s: no \"mcpServers\" object: mcpbridge reads the mcpServers JSON of Claude Desktop, Claude Code, Cursor and Gemini CLI", filename)
}

// treePaths records in paths the path of each key and value under n
// (at path), by its position: a key has the path of its value.
func treePaths(n *yaml.Node, path string, paths map[Pos]string) {
	for i := 0; i < len(n.Content); i++ {
		child, at := n.Content[i], fmt.Sprintf("%s[%d]", path, i)
		if n.Kind == yaml.MappingNode && i+1 < len(n.Content) {
			at = yamlconf.JoinKey(path, child.Value)
			paths[Pos{child.Line, child.Column}] = at
			i++
			child = n.Content[i]
		}
		paths[Pos{child.Line, child.Column}] = at
		treePaths(child, at, paths)
	}
}

// projectServers notes the servers of ~/.claude.json's projects
// (projects.<path>.mcpServers, Claude Code's local scope), which are not
// read: they belong to one project each, and would clash by name.
func projectServers(root *yaml.Node) []Note {
	projects := lookup(root, "projects")
	if projects == nil || projects.Kind != yaml.MappingNode {
		return nil
	}
	var notes []Note
	for i := 0; i+1 < len(projects.Content); i += 2 {
		servers := lookup(projects.Content[i+1], "mcpServers")
		if servers == nil || servers.Kind != yaml.MappingNode || len(servers.Content) == 0 {
			continue
		}
		path := yamlconf.JoinKey(yamlconf.JoinKey("projects", projects.Content[i].Value), "mcpServers")
		n := fmt.Sprintf("%d servers", len(servers.Content)/2)
		if n == "1 servers" {
			n = "1 server"
		}
		notes = append(notes, Note{Pos: Pos{servers.Line, servers.Column}, Path: path, Msg: n +
			" of this project (Claude Code's local scope) not read: only the top-level mcpServers are; " +
			"copy them into the project's mcpbridge.yaml (mcpbridge add-json NAME JSON)"})
	}
	return notes
}

// converter collects the notes of one file.
type converter struct {
	root  string // "mcpServers" or "mcp_servers"
	notes []Note
}

func (c *converter) note(s *server, n *yaml.Node, key, format string, args ...any) {
	path := yamlconf.JoinKey(c.root, s.key)
	if key != "" {
		path = yamlconf.JoinKey(path, key)
	}
	note := Note{Server: s.key, Entry: s.id, Path: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		note.Line, note.Column = n.Line, n.Column
	}
	c.notes = append(c.notes, note)
}

// mistake notes what makes the entry invalid (Note.Mistake).
func (c *converter) mistake(s *server, n *yaml.Node, key, format string, args ...any) {
	c.note(s, n, key, format, args...)
	c.notes[len(c.notes)-1].Mistake = true
}

// newServer starts the entry of the server under key, noting a key that
// cannot be an id or serverName as it is.
func (c *converter) newServer(key *yaml.Node) *server {
	name := serverName(key.Value)
	s := &server{key: key.Value, id: name, pos: Pos{key.Line, key.Column}}
	if name != key.Value {
		c.note(s, key, "", "%q is not a valid serverName: the entry is named %q", key.Value, name)
	}
	s.set("serverName", at(str(name), key))
	return s
}

// invalidName finds the characters a serverName cannot have.
var invalidName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// serverName makes key a valid serverName (and id): [A-Za-z0-9_-]{1,32},
// no "__", no "_" at either end, starting with a letter or digit.
func serverName(key string) string {
	s := invalidName.ReplaceAllString(key, "-")
	for strings.Contains(s, "__") {
		s = strings.ReplaceAll(s, "__", "_")
	}
	s = strings.Trim(s, "_-")
	if len(s) > 32 {
		s = strings.TrimRight(s[:32], "_-")
	}
	if s == "" {
		s = "server"
	}
	return s
}

// jsonFields are the mcpServers keys that map, each with its handler.
var jsonFields = []string{"type", "transport", "transportType", "command", "args", "env", "cwd", "url", "httpUrl", "serverUrl", "headers",
	"timeout", "disabled", "includeTools", "excludeTools", "disabledTools"}

// jsonServer converts one server of an mcpServers object.
func (c *converter) jsonServer(key, v *yaml.Node) *server {
	s := c.newServer(key)
	if v.Kind != yaml.MappingNode {
		c.mistake(s, v, "", "must be an object with \"command\" or \"url\", got %s", yamlconf.Describe(v))
		return s
	}
	get := func(k string) *yaml.Node { return lookup(v, k) }
	transport, endpoint := c.jsonTransport(s, v, hasMisspelt(v))
	switch transport {
	case "": // nothing to run: the entry's problem is a note (jsonTransport)
	case "stdio":
		s.set("transport", at(str(transport), get("command"), get("type"), key))
		c.copyFields(s, v, map[string]string{"command": "command", "args": "args", "env": "env", "cwd": "cwd"}, expandDollar)
		c.envNumbers(s, get("env"))
	default:
		s.set("transport", at(str(transport), get("type"), key))
		s.set("url", at(str(expandDollar(endpoint.Value)), endpoint))
		c.copyFields(s, v, map[string]string{"headers": "headers"}, expandDollar)
	}
	if t := get("timeout"); t != nil {
		c.timeout(s, t)
	}
	if d := get("disabled"); d != nil {
		s.disabled = c.disabled(s, d)
	}
	exclude, excludeKey := c.denyList(s, v)
	c.toolFilter(s, get("includeTools"), exclude, excludeKey)
	if transport != "" { // without one, the entry has nothing to run anyway
		c.unusedFields(s, v, transport, endpoint)
	}
	c.unknownFields(s, v)
	if c.mistaken(s) {
		keepLeftOut(s, v, transport, keyOf(v, endpoint))
	}
	return s
}

// denyList is the server's list of tools to hide and its key: excludeTools
// (Gemini CLI's) or disabledTools (Roo Code's, Kiro's); of both, the
// second is noted as left out.
func (c *converter) denyList(s *server, v *yaml.Node) (*yaml.Node, string) {
	exclude, disabled := lookup(v, "excludeTools"), lookup(v, "disabledTools")
	switch {
	case exclude == nil:
		return disabled, "disabledTools"
	case disabled != nil:
		for i := 0; i+1 < len(v.Content); i += 2 {
			if v.Content[i+1] == disabled {
				c.note(s, v.Content[i], "disabledTools", "not used: excludeTools lists the tools to hide (left out)")
			}
		}
	}
	return exclude, "excludeTools"
}

// mistaken reports whether a note on s is a mistake (Note.Mistake): its
// entry is invalid.
func (c *converter) mistaken(s *server) bool {
	return slices.ContainsFunc(c.notes, func(n Note) bool { return n.Mistake && n.Server == s.key })
}

// keepLeftOut writes into the entry of s, invalid for a mistake, each field
// of v the conversion left out, as written: a credential may sit under any
// of them (a misspelt "header", the env of a server whose "comand" is
// misspelt), and host withholds every variable of an invalid entry from
// the children it starts.
func keepLeftOut(s *server, v *yaml.Node, transport, endpoint string) {
	for i := 0; i+1 < len(v.Content); i += 2 {
		if k := v.Content[i]; !mapped(k.Value, transport, endpoint) {
			s.set(k.Value, rewrite(v.Content[i+1], expandDollar))
		}
	}
}

// mapped reports whether the field key of a server is taken into its
// entry, given its transport ("" for none) and the key of its URL.
func mapped(key, transport, endpoint string) bool {
	switch {
	case !slices.Contains(jsonFields, key):
		return false
	case slices.Contains(transportFields["stdio"], key):
		return transport == "stdio"
	case key == "headers":
		return transport != "" && transport != "stdio"
	case slices.Contains(transportFields["http"], key): // a URL
		return key == endpoint
	}
	return true
}

// transportFields are the fields that go with one transport only (those
// of HTTP, for both HTTP transports).
var transportFields = map[string][]string{
	"stdio": {"command", "args", "env", "cwd"},
	"http":  {"url", "httpUrl", "serverUrl", "headers"},
}

// unusedFields notes the keys of v that belong to the other transport, and
// the URL keys other than endpoint, the one used: each is left out.
func (c *converter) unusedFields(s *server, v *yaml.Node, transport string, endpoint *yaml.Node) {
	url := keyOf(v, endpoint)
	for i := 0; i+1 < len(v.Content); i += 2 {
		k := v.Content[i]
		switch {
		case !slices.Contains(jsonFields, k.Value) || mapped(k.Value, transport, url):
		case url != "" && k.Value != "headers" && slices.Contains(transportFields["http"], k.Value):
			c.note(s, k, k.Value, "not used: %s is the server's URL (left out)", url)
		default:
			c.note(s, k, k.Value, "not used for %s server (left out)", withArticle(transport))
		}
	}
}

// withArticle is "a stdio", "a streamable-http" or "an sse".
func withArticle(transport string) string {
	if transport == "sse" {
		return "an sse"
	}
	return "a " + transport
}

// keyOf is the key of the value val in the mapping v; "" for a nil val.
func keyOf(v, val *yaml.Node) string {
	for i := 0; i+1 < len(v.Content); i += 2 {
		if v.Content[i+1] == val {
			return v.Content[i].Value
		}
	}
	return "" // val is nil: a stdio server's URL
}

// disabled reads d, the disabled field: a boolean, or else a string
// spelling one (taken, with a note); anything else is noted and taken as
// true, since a server meant to be off must not start.
func (c *converter) disabled(s *server, d *yaml.Node) bool {
	if d.Tag == "!!bool" {
		return d.Value == "true"
	}
	switch {
	case d.Tag == "!!str" && strings.EqualFold(d.Value, "true"):
		c.note(s, d, "disabled", "must be true or false, got the string %q: taken as true (the entry is written disabled)", d.Value)
		return true
	case d.Tag == "!!str" && strings.EqualFold(d.Value, "false"):
		c.note(s, d, "disabled", "must be true or false, got the string %q: taken as false", d.Value)
		return false
	}
	c.note(s, d, "disabled", "must be true or false, got %s: the entry is written disabled (set it to false to run the server)", yamlconf.Describe(d))
	return true
}

// unknownFields notes the keys of v that map to nothing: one close to a
// field mcpbridge reads ("comand") is a mistake, the others are left out.
func (c *converter) unknownFields(s *server, v *yaml.Node) {
	for i := 0; i+1 < len(v.Content); i += 2 {
		k := v.Content[i]
		switch m := misspelt(v, k); {
		case slices.Contains(jsonFields, k.Value):
		case m != "":
			c.mistake(s, k, k.Value, "unknown field: did you mean %q?", m)
		default:
			c.note(s, k, k.Value, "not used by mcpbridge (left out)")
		}
	}
}

// hasMisspelt reports whether a key of the server object v is misspelt.
func hasMisspelt(v *yaml.Node) bool {
	for i := 0; i+1 < len(v.Content); i += 2 {
		if misspelt(v, v.Content[i]) != "" {
			return true
		}
	}
	return false
}

// misspelt is the field key (of the server object v) misspells, when it is
// close to one that v does not have; "" otherwise.
func misspelt(v, key *yaml.Node) string {
	if key.Kind != yaml.ScalarNode {
		return ""
	}
	return misspelling(key.Value, jsonFields, func(f string) bool { return lookup(v, f) != nil })
}

// misspelling is the one of fields that key misspells, when it is close
// to one the server does not have (has); "" otherwise.
func misspelling(key string, fields []string, has func(string) bool) string {
	if slices.Contains(fields, key) {
		return ""
	}
	if m := yamlconf.Suggest(key, fields); m != "" && !has(m) {
		return m
	}
	return ""
}

// noTransport is the mistake of a server with nothing to run.
const noTransport = `has neither "command" (a program to start) nor "url" (the address of an HTTP server): add one`

// jsonTransport picks the transport of a server object and, for HTTP, the
// URL node. command means stdio; httpUrl is Streamable HTTP (Gemini CLI);
// url (serverUrl in Windsurf) follows type, and without one a path ending
// in /sse is the legacy transport, anything else Streamable HTTP.
func (c *converter) jsonTransport(s *server, v *yaml.Node, mistaken bool) (string, *yaml.Node) {
	typ := lookup(v, "type")
	for _, alias := range []string{"transport", "transportType"} { // Cline writes transportType
		if typ == nil {
			typ = lookup(v, alias)
		}
	}
	if lookup(v, "command") != nil {
		if typ != nil && typ.Value != "stdio" {
			c.note(s, typ, keyOf(v, typ), "%q with a command: taken as stdio", typ.Value)
		}
		return "stdio", nil
	}
	if u := lookup(v, "httpUrl"); u != nil {
		return "streamable-http", u
	}
	u := lookup(v, "url")
	if u == nil {
		u = lookup(v, "serverUrl")
	}
	if u == nil {
		if !mistaken { // a misspelt command or url says it better
			c.mistake(s, v, "", noTransport)
		}
		return "", nil
	}
	if typ != nil {
		switch strings.ToLower(typ.Value) {
		case "sse":
			return "sse", u
		case "http", "streamable-http", "streamablehttp", "streamable_http":
			return "streamable-http", u
		}
		c.note(s, typ, keyOf(v, typ), "unknown transport %q: taken as Streamable HTTP", typ.Value)
		return "streamable-http", u
	}
	if p, err := url.Parse(u.Value); err == nil && strings.HasSuffix(strings.TrimSuffix(p.Path, "/"), "/sse") {
		c.note(s, u, keyOf(v, u), "no type: the path ends in /sse, so the legacy SSE transport is used (set \"type\": \"http\" for Streamable HTTP)")
		return "sse", u
	}
	return "streamable-http", u
}

// copyFields copies the keys of v named in keys (source key → config
// key), rewriting every string in them with fix.
func (c *converter) copyFields(s *server, v *yaml.Node, keys map[string]string, fix func(string) string) {
	for i := 0; i+1 < len(v.Content); i += 2 {
		if to, ok := keys[v.Content[i].Value]; ok {
			s.set(to, rewrite(v.Content[i+1], fix))
		}
	}
}

// envNumbers writes each number in env, the map the entry copied,
// as its string, as VS Code takes it (its env values may be numbers; a
// process's environment holds strings).
func (c *converter) envNumbers(s *server, env *yaml.Node) {
	if env == nil || env.Kind != yaml.MappingNode {
		return
	}
	copied := s.field("env")
	for i := 1; i < len(env.Content); i += 2 {
		n := env.Content[i]
		if n.Tag == "!!int" || n.Tag == "!!float" {
			copied.Content[i].Tag, copied.Content[i].Style = "!!str", yaml.DoubleQuotedStyle
			c.note(s, n, "env", "the number %s is taken as the string %q", n.Value, n.Value)
			last := &c.notes[len(c.notes)-1]
			last.Path = yamlconf.JoinKey(last.Path, env.Content[i-1].Value)
		}
	}
}

// timeout is Gemini CLI's timeout (milliseconds) or Cline's (seconds, at
// most an hour): a value under 1000 is taken for seconds.
func (c *converter) timeout(s *server, t *yaml.Node) {
	n, err := strconv.ParseFloat(t.Value, 64)
	if t.Tag != "!!int" && t.Tag != "!!float" || err != nil || n <= 0 {
		c.note(s, t, "timeout", "must be a positive number, got %s (left out)", yamlconf.Describe(t))
		return
	}
	ms := int64(n)
	if n < 1000 {
		ms = int64(n * 1000)
		c.note(s, t, "timeout", "%s taken as seconds (toolCallTimeoutMs: %d)", t.Value, ms)
	}
	s.set("toolCallTimeoutMs", at(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(ms, 10)}, t))
}

// toolFilter maps an allow list and a deny list of raw tool names; both
// given, the deny list is applied to the allow list (mcpbridge takes one).
func (c *converter) toolFilter(s *server, include, exclude *yaml.Node, excludeKey string) {
	switch {
	case include != nil && exclude != nil && include.Kind == yaml.SequenceNode && exclude.Kind == yaml.SequenceNode:
		kept := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle, Line: include.Line, Column: include.Column}
		for _, n := range include.Content {
			if !slices.ContainsFunc(exclude.Content, func(x *yaml.Node) bool { return x.Value == n.Value }) {
				kept.Content = append(kept.Content, n)
			}
		}
		c.note(s, exclude, excludeKey, "applied to the allowed tools: enabledTools keeps those not excluded")
		s.set("enabledTools", kept)
	case include != nil:
		s.set("enabledTools", flow(include))
	case exclude != nil:
		s.set("disabledTools", flow(exclude))
	}
}

// dollarName is a $NAME reference (Gemini CLI's), not preceded by $.
var dollarName = regexp.MustCompile(`(^|[^$])\$([A-Za-z_][A-Za-z0-9_]*)`)

// editorVar is a variable of Cursor's, Windsurf's and VS Code's configs:
// ${env:NAME}, the environment's, or ${userHome}.
var editorVar = regexp.MustCompile(`\$\{(?:env:([A-Za-z_][A-Za-z0-9_]*)|userHome)\}`)

// expandDollar writes $NAME, ${env:NAME} and ${userHome} as ${NAME} and
// ${HOME}, mcpbridge's spelling; ${NAME} and ${NAME:-default} (Claude
// Code's) are the same in both.
func expandDollar(s string) string {
	s = editorVar.ReplaceAllStringFunc(s, func(ref string) string {
		if name := editorVar.FindStringSubmatch(ref)[1]; name != "" {
			return "${" + name + "}"
		}
		return "${HOME}"
	})
	for { // again, for the second of two adjacent references ($A$B)
		out := dollarName.ReplaceAllString(s, "$1$${$2}")
		if out == s {
			return out
		}
		s = out
	}
}

// rewrite returns n with fix applied to every string scalar in it.
func rewrite(n *yaml.Node, fix func(string) string) *yaml.Node {
	out := *n
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		out.Value = fix(n.Value)
	}
	out.Content = make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		out.Content[i] = rewrite(c, fix)
	}
	if n.Kind == yaml.SequenceNode {
		out.Style = yaml.FlowStyle
	}
	return &out
}

// flow is a sequence written on one line.
func flow(n *yaml.Node) *yaml.Node { return rewrite(n, func(s string) string { return s }) }

// lookup returns the value of key in the mapping n, or nil.
func lookup(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// at gives n the position of the first non-nil of from.
func at(n *yaml.Node, from ...*yaml.Node) *yaml.Node {
	for _, f := range from {
		if f != nil {
			n.Line, n.Column = f.Line, f.Column
			break
		}
	}
	return n
}
