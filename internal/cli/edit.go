package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/confpos"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/atomicfile"
	"github.com/mcpbridge/mcpbridge/internal/importconf"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
	"github.com/mcpbridge/mcpbridge/mcpclient"
)

// add adds a server to a config file: a stdio command after "--", or a
// remote server by URL (Claude Code's `claude mcp add` forms, and --url).
func (e *env) add(ctx context.Context, argv []string) error {
	f, err := parseFlags("add", specOf("add"), argv)
	if err != nil {
		return err
	}
	if f.fromRegistry != "" || f.pkg != "" || f.remote != "" {
		return e.addFromRegistry(ctx, f)
	}
	entry, err := newEntry(f)
	if err != nil {
		return err
	}
	return e.addEntry(f, f.args[0], entry)
}

// addEntry writes entry, named name, to the file of f's scope, and says
// what it added where.
func (e *env) addEntry(f *flags, name string, entry *yaml.Node) error {
	path, scope, err := e.addPath(f)
	if err != nil {
		return err
	}
	err = e.editConfig(path, name, func(data []byte, doc, list *yaml.Node) ([]byte, error) {
		if i := findEntry(list, name); i >= 0 {
			return nil, usagef("add: %s already has a server %q (line %d); remove it first", path, name, list.Content[i].Line)
		}
		return appendEntry(data, doc, list, entry)
	})
	if err != nil {
		return err
	}
	where := path
	if scope != "" {
		where += " (" + scope + " scope)"
	}
	fmt.Fprintf(e.Stdout, "Added %s server %q to %s\n", entryTransport(entry), name, where)
	return nil
}

// entryTransport is the transport an entry built by add or add-json says.
func entryTransport(entry *yaml.Node) string {
	if cfg := mapValue(entry, "config"); cfg != nil {
		if t := mapValue(cfg, "transport"); t != nil {
			return t.Value
		}
	}
	return "stdio"
}

// addPath is the file add writes: --config, MCPBRIDGE_CONFIG, --scope's
// file, else the project file when there is one, else the user file.
func (e *env) addPath(f *flags) (path, scope string, err error) {
	if files := e.configFiles(f); len(files) == 1 && files[0].scope == "" {
		if f.scope != "" {
			return "", "", usagef("%s: --scope and --config (or MCPBRIDGE_CONFIG) cannot be used together", "add")
		}
		return files[0].path, "", nil
	}
	scope = f.scope
	if scope == "" {
		scope = scopeUser
		if projectConfigPath() != "" {
			scope = scopeProject
		}
	}
	path, err = e.scopePath(scope)
	return path, scope, err
}

// scopePath is the file of a scope: the project file found, else
// ./mcpbridge.yaml; the user file.
func (e *env) scopePath(scope string) (string, error) {
	switch scope {
	case scopeProject:
		if p := projectConfigPath(); p != "" {
			return p, nil
		}
		return defaultConfigPath, nil
	case scopeUser:
		if p := e.userConfigPath(); p != "" {
			return p, nil
		}
		return "", usagef("--scope user: neither XDG_CONFIG_HOME nor HOME is set")
	case scopeLocal:
		if p := e.localConfigPath(); p != "" {
			return p, nil
		}
		return "", usagef("--scope local: neither XDG_CONFIG_HOME nor HOME is set")
	default:
		return "", usagef("--scope %q: want local (yours, this project only), project (shared with the project) or user (yours, every project)", scope)
	}
}

// remove removes the entry whose id or serverName is NAME, from the file
// that has it: --config's, --scope's, else the project file, then the
// user file.
func (e *env) remove(argv []string) error {
	f, err := parseFlags("remove", specOf("remove"), argv)
	if err != nil {
		return err
	}
	if len(f.args) != 1 {
		return usagef("remove: want NAME, got %d arguments", len(f.args))
	}
	name := f.args[0]
	files, err := e.removeCandidates(f)
	if err != nil {
		return err
	}
	var known, looked []string
	for _, path := range files {
		if !exists(path) {
			continue
		}
		looked = append(looked, path)
		data, err := host.ReadConfigFile(path)
		if err != nil {
			return &configError{err}
		}
		_, list, err := editableList(path, data)
		if err != nil {
			return err
		}
		if findEntry(list, name) < 0 {
			known = append(known, entryNames(list)...)
			continue
		}
		err = e.editConfig(path, "", func(data []byte, doc, list *yaml.Node) ([]byte, error) {
			return removeEntry(data, doc, list, findEntry(list, name))
		})
		if err == nil {
			fmt.Fprintf(e.Stdout, "Removed server %q from %s\n", name, path)
		}
		return err
	}
	if len(looked) == 0 {
		return usagef("remove: there is no config file to remove %q from (looked for %s)", name, strings.Join(files, " and "))
	}
	msg := fmt.Sprintf("remove: %s has no server %q", strings.Join(looked, " or "), name)
	if s := yamlconf.Suggest(name, known); s != "" {
		msg += fmt.Sprintf(": did you mean %q?", s)
	}
	return usagef("%s", msg)
}

// removeCandidates are the files remove looks in, in order.
func (e *env) removeCandidates(f *flags) ([]string, error) {
	if files := e.configFiles(f); len(files) == 1 && files[0].scope == "" {
		return []string{files[0].path}, nil
	}
	if f.scope != "" {
		p, err := e.scopePath(f.scope)
		return []string{p}, err
	}
	var out []string
	for _, scope := range []string{scopeProject, scopeUser, scopeLocal} {
		if p, err := e.scopePath(scope); err == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// entryNames are the ids and serverNames of a list's entries.
func entryNames(list *yaml.Node) []string {
	var out []string
	for _, item := range list.Content {
		if item.Kind != yaml.MappingNode {
			continue
		}
		if v := mapValue(item, "id"); v != nil {
			out = append(out, v.Value)
		}
		if cfg := mapValue(item, "config"); cfg != nil && cfg.Kind == yaml.MappingNode {
			if v := mapValue(cfg, "serverName"); v != nil {
				out = append(out, v.Value)
			}
		}
	}
	return out
}

// newEntry builds the entry add appends, from NAME and what follows:
// a URL (or --url) for a remote server, else a command.
func newEntry(f *flags) (*yaml.Node, error) {
	if len(f.args) == 0 {
		return nil, usagef("add: want NAME -- COMMAND [ARGS...], NAME URL or NAME --url URL")
	}
	name, rest := f.args[0], f.args[1:]
	url := f.url
	if url == "" && len(rest) == 1 && isURL(rest[0]) {
		url, rest = rest[0], nil
	}
	transport, err := addTransport(f.transport, url != "")
	if err != nil {
		return nil, err
	}
	cfg := mapping("serverName", name)
	switch {
	case url != "" && len(rest) > 0:
		return nil, usagef("add: give either a URL or a command after --, not both")
	case transport == mcpclient.TransportStdio && url != "":
		return nil, usagef("add: --transport stdio runs a command: mcpbridge add %s -- COMMAND [ARGS...]", name)
	case url != "":
		err = remoteConfig(cfg, f, transport, url)
	case transport != mcpclient.TransportStdio:
		return nil, usagef("add: --transport %s needs the server's URL: mcpbridge add --transport %s %s https://…", f.transport, f.transport, name)
	case len(rest) > 0:
		err = stdioConfig(cfg, f, rest)
	default:
		return nil, usagef("add: want a command after -- (mcpbridge add %s -- npx -y some-server) or a URL", name)
	}
	if err != nil {
		return nil, err
	}
	entry := mapping("id", name, "name", clientkind.Name)
	appendNode(entry, "config", cfg)
	return entry, nil
}

// isURL tells a remote server's address from a command.
func isURL(s string) bool { return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") }

// addTransport maps --transport (Claude Code's stdio, http, sse, or
// mcpbridge's streamable-http) to mcpbridge's transport; without it, a URL
// means Streamable HTTP and a command stdio.
func addTransport(t string, remote bool) (mcpclient.Transport, error) {
	switch t {
	case "":
		if remote {
			return mcpclient.TransportStreamableHTTP, nil
		}
		return mcpclient.TransportStdio, nil
	case "stdio":
		return mcpclient.TransportStdio, nil
	case "http", "streamable-http":
		return mcpclient.TransportStreamableHTTP, nil
	case "sse":
		return mcpclient.TransportSSE, nil
	}
	return "", usagef("add: --transport %q: want stdio, http or sse", t)
}

// remoteConfig fills cfg for a server at url.
func remoteConfig(cfg *yaml.Node, f *flags, transport mcpclient.Transport, url string) error {
	if len(f.env) > 0 {
		return usagef("add: -e/--env is for a command's environment; a remote server takes -H/--header")
	}
	if _, err := parseHeaders(f.headers); err != nil {
		return err
	}
	appendPairs(cfg, "transport", string(transport), "url", url)
	if len(f.headers) > 0 {
		appendNode(cfg, "headers", stringMap(f.headers, func(h string) (string, string) {
			k, v, _ := strings.Cut(h, ":")
			return strings.TrimSpace(k), strings.TrimSpace(v)
		}))
	}
	return nil
}

// stdioConfig fills cfg for a server run as command.
func stdioConfig(cfg *yaml.Node, f *flags, command []string) error {
	if len(f.headers) > 0 {
		return usagef("add: -H/--header goes with a remote server's URL")
	}
	appendPairs(cfg, "transport", string(mcpclient.TransportStdio), "command", command[0])
	if len(command) > 1 {
		appendNode(cfg, "args", flowList(command[1:]))
	}
	env, err := envMap(f.env)
	if err != nil {
		return err
	}
	if env != nil {
		appendNode(cfg, "env", env)
	}
	return nil
}

// envMap turns --env K=V flags into a mapping, or nil for none.
func envMap(env []string) (*yaml.Node, error) {
	for _, kv := range env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return nil, usagef("--env %q: want NAME=value", kv)
		}
	}
	if len(env) == 0 {
		return nil, nil
	}
	return stringMap(env, func(kv string) (string, string) {
		k, v, _ := strings.Cut(kv, "=")
		return k, v
	}), nil
}

// stringMap is a block mapping of the pairs split out of items.
func stringMap(items []string, split func(string) (string, string)) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	for _, it := range items {
		k, v := split(it)
		appendPairs(m, k, v)
	}
	return m
}

// flowList is a list of strings on one line: [a, b].
func flowList(items []string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, it := range items {
		n.Content = append(n.Content, scalar(it))
	}
	return n
}

func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// mapping is a block mapping of string pairs.
func mapping(pairs ...string) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	appendPairs(m, pairs...)
	return m
}

func appendPairs(m *yaml.Node, pairs ...string) {
	for i := 0; i+1 < len(pairs); i += 2 {
		appendNode(m, pairs[i], scalar(pairs[i+1]))
	}
}

func appendNode(m *yaml.Node, key string, v *yaml.Node) {
	m.Content = append(m.Content, scalar(key), v)
}

// findEntry returns the index of the entry whose id, or config.serverName,
// is name; -1 when there is none.
func findEntry(list *yaml.Node, name string) int {
	for i, item := range list.Content {
		if item.Kind != yaml.MappingNode {
			continue
		}
		if v := mapValue(item, "id"); v != nil && v.Value == name {
			return i
		}
		if cfg := mapValue(item, "config"); cfg != nil && cfg.Kind == yaml.MappingNode {
			if v := mapValue(cfg, "serverName"); v != nil && v.Value == name {
				return i
			}
		}
	}
	return -1
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// editConfig reads the config file at path (none is an empty list), lets
// change edit it, checks the entry id it adds (none: "") and replaces the
// file atomically, creating its directory when missing.
func (e *env) editConfig(path, id string, change func(data []byte, doc, list *yaml.Node) ([]byte, error)) error {
	data, err := host.ReadConfigFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &configError{err}
	}
	doc, list, err := editableList(path, data)
	if err != nil {
		return err
	}
	out, err := change(data, doc, list)
	if err != nil {
		return err
	}
	if err := e.checkEdited(path, out, id); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return writeAtomic(path, out)
}

// appendEntry adds entry at the end of a block list as text, so every
// byte of the file before it (comments, blank lines, quoting) stays as it
// was; a flow list ([] or [...]) is rewritten from the node tree, which
// keeps comments and order.
func appendEntry(data []byte, doc, list, entry *yaml.Node) ([]byte, error) {
	if len(list.Content) == 0 && onlyComments(data) {
		// A file of comments (a header written before any entry) has no
		// node to keep them on: the entry goes after them as text.
		list = &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{{Column: 3}}}
	} else if len(list.Content) == 0 || list.Style&yaml.FlowStyle != 0 {
		list.Style = 0
		list.Content = append(list.Content, entry)
		return encodeYAML(doc)
	}
	text, err := encodeYAML(&yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{entry}})
	if err != nil {
		return nil, err // untested: the entry was built above
	}
	// The new item's dash goes where the first item's is.
	indent := strings.Repeat(" ", max(0, list.Content[0].Column-3))
	body, tail := splitTail(string(data), len(indent))
	var b bytes.Buffer
	b.WriteString(body)
	if len(body) > 0 && body[len(body)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString(indented(text, indent))
	b.WriteString(tail)
	return b.Bytes(), nil
}

// indented is encoded YAML text with indent before each line.
func indented(text []byte, indent string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(strings.TrimSuffix(string(text), "\n"), "\n") {
		b.WriteString(indent + line)
	}
	b.WriteByte('\n')
	return b.String()
}

// splitTail splits a file's text before its trailing comments: the
// blank lines and the comments no deeper than the list's dashes (at
// indent) that end it. They stay at the end, after an added entry, so
// that removing the entry again gives the file back as it was. A file of
// comments alone is all body.
func splitTail(text string, indent int) (body, tail string) {
	if onlyComments([]byte(text)) {
		return text, ""
	}
	lines := strings.SplitAfter(text, "\n")
	i := len(lines)
	for i > 0 {
		l := lines[i-1]
		t := strings.TrimSpace(l)
		if t != "" && !(strings.HasPrefix(t, "#") && len(l)-len(strings.TrimLeft(l, " ")) <= indent) {
			break
		}
		i--
	}
	return strings.Join(lines[:i], ""), strings.Join(lines[i:], "")
}

// onlyComments reports whether data holds nothing but comments and blank
// lines (and is not empty).
func onlyComments(data []byte) bool {
	if len(bytes.TrimSpace(data)) == 0 {
		return false
	}
	for _, l := range strings.Split(string(data), "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			return false
		}
	}
	return true
}

// removeEntry removes item i of a block list as text: its lines, and the
// comment lines right above it, which are about it (unless they start the
// file); blank lines and the comments above the next item stay. A flow list is rewritten from the
// node tree.
func removeEntry(data []byte, doc, list *yaml.Node, i int) ([]byte, error) {
	if list.Style&yaml.FlowStyle != 0 {
		list.Content = slices.Delete(list.Content, i, i+1)
		return encodeYAML(doc)
	}
	lines := strings.SplitAfter(string(data), "\n")
	dash, end := entrySpan(lines, list, i)
	dashIndent := max(0, list.Content[i].Column-3)
	start := dash
	// Comments deeper than the dash are the previous entry's.
	for start > 0 && strings.HasPrefix(strings.TrimSpace(lines[start-1]), "#") &&
		len(lines[start-1])-len(strings.TrimLeft(lines[start-1], " ")) <= dashIndent {
		start--
	}
	if start == 0 {
		start = dash // comments from the top of the file are the file's
	}
	return []byte(strings.Join(slices.Delete(lines, start, end), "")), nil
}

// entrySpan is where item i of a block list is among the file's lines
// (0-based, end exclusive): from its dash's line to the next item, less
// the blank lines and comments that end it (the next item's, or the
// file's).
func entrySpan(lines []string, list *yaml.Node, i int) (dash, end int) {
	dash = list.Content[i].Line - 1
	end = len(lines)
	if i+1 < len(list.Content) {
		end = list.Content[i+1].Line - 1
	}
	for end > dash+1 {
		if t := strings.TrimSpace(lines[end-1]); t != "" && !strings.HasPrefix(t, "#") {
			break
		}
		end--
	}
	return dash, end
}

// replaceEntry writes item i of a block list, changed in its node tree,
// over its lines: the comments inside it are kept by the encoder, those
// around it and every other line stay as they were. A flow list is
// rewritten from the node tree.
func replaceEntry(data []byte, doc, list *yaml.Node, i int) ([]byte, error) {
	if list.Style&yaml.FlowStyle != 0 {
		return encodeYAML(doc)
	}
	entry := list.Content[i]
	head, foot := entry.HeadComment, entry.FootComment
	entry.HeadComment, entry.FootComment = "", "" // they stay in the text around it
	text, err := encodeYAML(&yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{entry}})
	entry.HeadComment, entry.FootComment = head, foot
	if err != nil {
		return nil, err // untested: the entry was parsed from the file
	}
	lines := strings.SplitAfter(string(data), "\n")
	dash, end := entrySpan(lines, list, i)
	var b strings.Builder
	b.WriteString(strings.Join(lines[:dash], ""))
	b.WriteString(indented(text, strings.Repeat(" ", max(0, entry.Column-3))))
	b.WriteString(strings.Join(lines[end:], ""))
	return []byte(b.String()), nil
}

// editableList is entryList for a file add and remove may edit: mcpbridge
// YAML, not another client's config.
func editableList(path string, data []byte) (*yaml.Node, *yaml.Node, error) {
	if format := importconf.Detect(data); format != importconf.FormatYAML {
		return nil, nil, usagef("%s is a %s; add and remove edit mcpbridge YAML (mcpbridge import %s > mcpbridge.yaml converts it)", path, format, path)
	}
	return entryList(path, data)
}

// entryList parses data as a YAML document whose root is the list of
// entries; an empty file is a new, empty list.
func entryList(path string, data []byte) (*yaml.Node, *yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, &configError{fmt.Errorf("%s: %v", path, err)}
	}
	if doc.Kind == 0 { // empty, or only comments
		list := &yaml.Node{Kind: yaml.SequenceNode}
		doc = yaml.Node{Kind: yaml.DocumentNode, HeadComment: doc.HeadComment, Content: []*yaml.Node{list}}
	}
	list := doc.Content[0]
	if list.Kind != yaml.SequenceNode {
		return nil, nil, &configError{fmt.Errorf("%s:%d:%d: the config must be a YAML list of entries", path, list.Line, list.Column)}
	}
	if len(list.Content) == 0 {
		list.Style = 0 // "[]" becomes a block list once it has entries
	}
	return &doc, list, nil
}

func encodeYAML(doc *yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}

// checkEdited validates the edited file as every command would read it:
// a file that no longer parses is refused, and so is an added entry (id)
// with a problem, except that variables need not be set in this shell (a
// server's secret is set where it runs). The entry's problems are named by
// field, not by a position in a file that was not written.
func (e *env) checkEdited(path string, data []byte, id string) error {
	plan, err := e.catalog(true).ParseIsolated(path, data, e.lookup)
	if err != nil {
		return &configError{fmt.Errorf("%s was left unchanged: the result would not be valid:\n%w", path, err)}
	}
	for _, pe := range plan.Invalid() {
		if pe.Entry.ID != id {
			continue
		}
		var ces confpos.Errors
		errors.As(pe.Err, &ces)
		var msgs []string
		for _, ce := range ces {
			if !strings.Contains(ce.Msg, "is not set (use ${") {
				msgs = append(msgs, ce.Path+": "+ce.Msg)
			}
		}
		if len(msgs) > 0 {
			return usagef("server %q not added, it would not be valid:\n%s", id, strings.Join(msgs, "\n"))
		}
	}
	return nil
}

// writeAtomic replaces path with data (atomicfile), so a reader (or
// serve's hot reload) sees the old file or the new one, never half of one.
// An existing file's permissions are kept.
func writeAtomic(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	return atomicfile.Write(path, data, mode)
}

// addJSON adds a server given as Claude Code's JSON for one server
// ({"type": "stdio", "command": …} or {"type": "http", "url": …}), as
// `claude mcp add-json NAME JSON` does, converted as import converts an
// mcpServers file.
func (e *env) addJSON(argv []string) error {
	f, err := parseFlags("add-json", specOf("add-json"), argv)
	if err != nil {
		return err
	}
	if len(f.args) != 2 {
		return usagef("add-json: want NAME JSON, got %d arguments", len(f.args))
	}
	name, raw := f.args[0], strings.TrimSpace(f.args[1])
	if !json.Valid([]byte(raw)) {
		return usagef("add-json: the server is not valid JSON: %s", describeJSONError([]byte(raw)))
	}
	if !strings.HasPrefix(raw, "{") {
		return usagef(`add-json: want a JSON object, like '{"type": "http", "url": "https://…"}', got %s`, jsonKind(raw[0]))
	}
	wrapped, _ := json.Marshal(map[string]map[string]json.RawMessage{"mcpServers": {name: json.RawMessage(raw)}})
	res, err := importconf.Convert("JSON", wrapped)
	if err != nil {
		return usagef("add-json: %v", err)
	}
	_, list, err := entryList("JSON", res.YAML)
	if err != nil || len(list.Content) != 1 {
		return usagef("add-json: the JSON does not describe one server")
	}
	entry := list.Content[0]
	root := "mcpServers." + name
	transport := yamlconf.Locate(entry, "config.transport")
	refused := transport == nil || transport.Kind != yaml.ScalarNode || transport.Value == ""
	for _, n := range res.Notes {
		if refused && n.Path == root {
			continue // the refusal below says it, with what to write
		}
		fmt.Fprintf(e.Stderr, "mcpbridge: add-json: %s: %s\n", strings.TrimPrefix(n.Path, root+"."), n.Msg)
	}
	if refused {
		return usagef(`add-json: server %q not added: it has neither "command" (a stdio server) nor "url" (an HTTP server), `+
			`like '{"type": "stdio", "command": "npx", "args": ["-y", "PACKAGE"]}' or '{"type": "http", "url": "https://…/mcp"}'`, name)
	}
	entry.HeadComment, entry.LineComment, entry.FootComment = "", "", ""
	return e.addEntry(f, name, entry)
}
