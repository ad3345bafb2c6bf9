package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/atomicfile"
	"github.com/mcpbridge/mcpbridge/internal/importconf"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/mcpclient/clientkind"
)

// add adds a server to the config file: a stdio command after "--", or a
// remote server with --url.
func (e *env) add(argv []string) error {
	f, err := parseFlags("add", flagSpec{config: true, edit: true}, argv)
	if err != nil {
		return err
	}
	entry, err := newEntry(f)
	if err != nil {
		return err
	}
	return e.editConfig(f, func(path string, data []byte, doc, list *yaml.Node) ([]byte, error) {
		if i := findEntry(list, f.args[0]); i >= 0 {
			return nil, usagef("add: %s already has a server %q (line %d); remove it first", path, f.args[0], list.Content[i].Line)
		}
		return appendEntry(data, doc, list, entry)
	})
}

// remove removes the entry whose id or serverName is NAME.
func (e *env) remove(argv []string) error {
	f, err := parseFlags("remove", flagSpec{config: true}, argv)
	if err != nil {
		return err
	}
	if len(f.args) != 1 {
		return usagef("remove: want NAME, got %d arguments", len(f.args))
	}
	return e.editConfig(f, func(path string, data []byte, doc, list *yaml.Node) ([]byte, error) {
		i := findEntry(list, f.args[0])
		if i < 0 {
			return nil, usagef("remove: %s has no server %q", path, f.args[0])
		}
		return removeEntry(data, doc, list, i)
	})
}

// newEntry builds the entry add appends, from NAME and what follows.
func newEntry(f *flags) (*yaml.Node, error) {
	if len(f.args) == 0 {
		return nil, usagef("add: want NAME -- COMMAND [ARGS...] or NAME --url URL")
	}
	name, command := f.args[0], f.args[1:]
	cfg := mapping("serverName", name)
	switch {
	case f.url != "" && len(command) > 0:
		return nil, usagef("add: give either --url or a command after --, not both")
	case f.url != "":
		if len(f.env) > 0 {
			return nil, usagef("add: --env is for a command's environment; a --url server takes --header")
		}
		transport := f.transport
		if transport == "" {
			transport = string(mcpclient.TransportStreamableHTTP)
		}
		headers, err := parseHeaders(f.headers)
		if err != nil {
			return nil, err
		}
		appendPairs(cfg, "transport", transport, "url", f.url)
		if len(headers) > 0 {
			appendNode(cfg, "headers", stringMap(f.headers, func(h string) (string, string) {
				k, v, _ := strings.Cut(h, ":")
				return strings.TrimSpace(k), strings.TrimSpace(v)
			}))
		}
	case len(command) > 0:
		if len(f.headers) > 0 || f.transport != "" {
			return nil, usagef("add: --header and --transport go with --url")
		}
		appendPairs(cfg, "transport", string(mcpclient.TransportStdio), "command", command[0])
		if len(command) > 1 {
			args := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
			for _, a := range command[1:] {
				args.Content = append(args.Content, scalar(a))
			}
			appendNode(cfg, "args", args)
		}
		env, err := envMap(f.env)
		if err != nil {
			return nil, err
		}
		if env != nil {
			appendNode(cfg, "env", env)
		}
	default:
		return nil, usagef("add: want a command after -- (mcpbridge add %s -- npx -y some-server) or --url URL", name)
	}
	entry := mapping("id", name, "name", clientkind.PluginName)
	appendNode(entry, "config", cfg)
	return entry, nil
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

// editPath is the file add and remove edit: --config, MCPBRIDGE_CONFIG,
// else ./mcpbridge.yaml.
func (e *env) editPath(f *flags) string {
	if path := e.configPath(f); path != "" {
		return path
	}
	return defaultConfigPath
}

// editConfig reads the config file (none is an empty list), lets change
// edit it, validates the result and replaces the file atomically.
func (e *env) editConfig(f *flags, change func(path string, data []byte, doc, list *yaml.Node) ([]byte, error)) error {
	path := e.editPath(f)
	data, err := host.ReadConfigFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &configError{err}
	}
	if format := importconf.Detect(data); format != importconf.FormatYAML {
		return usagef("%s is a %s; add and remove edit mcpbridge YAML (mcpbridge import %s > mcpbridge.yaml converts it)", path, format, path)
	}
	doc, list, err := entryList(path, data)
	if err != nil {
		return err
	}
	out, err := change(path, data, doc, list)
	if err != nil {
		return err
	}
	if err := e.checkEdited(path, out); err != nil {
		return err
	}
	return writeAtomic(path, out)
}

// appendEntry adds entry at the end of a block list as text, so every
// byte of the file before it (comments, blank lines, quoting) stays as it
// was; a flow list ([] or [...]) is rewritten from the node tree, which
// keeps comments and order.
func appendEntry(data []byte, doc, list, entry *yaml.Node) ([]byte, error) {
	if len(list.Content) == 0 || list.Style&yaml.FlowStyle != 0 {
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
	var b bytes.Buffer
	b.Write(data)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		b.WriteByte('\n')
	}
	for _, line := range strings.SplitAfter(strings.TrimSuffix(string(text), "\n"), "\n") {
		b.WriteString(indent + line)
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
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
	isBlankOrComment := func(l string) bool {
		t := strings.TrimSpace(l)
		return t == "" || strings.HasPrefix(t, "#")
	}
	dash := list.Content[i].Line - 1 // 0-based index of the dash's line
	start := dash
	for start > 0 && strings.HasPrefix(strings.TrimSpace(lines[start-1]), "#") {
		start--
	}
	if start == 0 {
		start = dash // comments from the top of the file are the file's
	}
	end := len(lines) // exclusive
	if i+1 < len(list.Content) {
		end = list.Content[i+1].Line - 1
	}
	for end > start+1 && isBlankOrComment(lines[end-1]) {
		end--
	}
	return []byte(strings.Join(slices.Delete(lines, start, end), "")), nil
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

// checkEdited validates the edited file as every command would read it,
// except that variables need not be set in this shell: a server's secret
// is set where it runs.
func (e *env) checkEdited(path string, data []byte) error {
	_, err := e.catalog(true).Parse(path, data, e.lookup)
	var ces host.ConfigErrors
	if !errors.As(err, &ces) {
		return err
	}
	var kept host.ConfigErrors
	for _, ce := range ces {
		if !strings.Contains(ce.Msg, "is not set (use ${") {
			kept = append(kept, ce)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return &configError{fmt.Errorf("%s was left unchanged: the result would not be valid:\n%w", path, kept)}
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
