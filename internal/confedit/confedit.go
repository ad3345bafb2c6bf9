// Package confedit edits an mcpbridge config file, a YAML list of
// entries, as text: an entry is appended, removed or replaced by its lines,
// so that every other byte of the file (comments, blank lines, quoting,
// order) stays as it was, and removing an added entry gives the file back.
// The node helpers build entries to add. `mcpbridge add`, `remove`,
// `registry add` and the agent's "always" write with it; it is internal
// because the file's layout is the command's, and a harness configures
// servers in Go (mcpclient.Config, host.Plan) rather than by editing YAML.
package confedit

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/internal/atomicfile"
)

// Names are the ids and serverNames of a list's entries.
func Names(list *yaml.Node) []string {
	var out []string
	for _, item := range list.Content {
		if item.Kind != yaml.MappingNode {
			continue
		}
		if v := Value(item, "id"); v != nil {
			out = append(out, v.Value)
		}
		if cfg := Value(item, "config"); cfg != nil && cfg.Kind == yaml.MappingNode {
			if v := Value(cfg, "serverName"); v != nil {
				out = append(out, v.Value)
			}
		}
	}
	return out
}

// StringMap is a block mapping of the pairs split out of items.
func StringMap(items []string, split func(string) (string, string)) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	for _, it := range items {
		k, v := split(it)
		AppendPairs(m, k, v)
	}
	return m
}

// FlowList is a list of strings on one line: [a, b].
func FlowList(items []string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, it := range items {
		n.Content = append(n.Content, Scalar(it))
	}
	return n
}

// Scalar is the string s as a node.
func Scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// Mapping is a block mapping of string pairs.
func Mapping(pairs ...string) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	AppendPairs(m, pairs...)
	return m
}

// AppendPairs appends string pairs (key, value, key, value...) to the
// mapping m.
func AppendPairs(m *yaml.Node, pairs ...string) {
	for i := 0; i+1 < len(pairs); i += 2 {
		AppendNode(m, pairs[i], Scalar(pairs[i+1]))
	}
}

// AppendNode appends key: v to the mapping m.
func AppendNode(m *yaml.Node, key string, v *yaml.Node) {
	m.Content = append(m.Content, Scalar(key), v)
}

// Find returns the index of the entry whose id, or config.serverName,
// is name; -1 when there is none.
func Find(list *yaml.Node, name string) int {
	for i, item := range list.Content {
		if item.Kind != yaml.MappingNode {
			continue
		}
		if v := Value(item, "id"); v != nil && v.Value == name {
			return i
		}
		if cfg := Value(item, "config"); cfg != nil && cfg.Kind == yaml.MappingNode {
			if v := Value(cfg, "serverName"); v != nil && v.Value == name {
				return i
			}
		}
	}
	return -1
}

// Value is the value of key in the mapping m, nil when m has none.
func Value(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// Append adds entry at the end of a block list as text, so every
// byte of the file before it (comments, blank lines, quoting) stays as it
// was; a flow list ([] or [...]) is rewritten from the node tree, which
// keeps comments and order.
func Append(data []byte, doc, list, entry *yaml.Node) ([]byte, error) {
	if len(list.Content) == 0 && onlyComments(data) {
		// A file of comments (a header written before any entry) has no
		// node to keep them on: the entry goes after them as text.
		list = &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{{Column: 3}}}
	} else if len(list.Content) == 0 || list.Style&yaml.FlowStyle != 0 {
		list.Style = 0
		list.Content = append(list.Content, entry)
		return Encode(doc)
	}
	text, err := Encode(&yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{entry}})
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

// Remove removes item i of a block list as text: its lines, and the
// comment lines right above it, which are about it (unless they start the
// file); blank lines and the comments above the next item stay. A flow list is rewritten from the
// node tree.
func Remove(data []byte, doc, list *yaml.Node, i int) ([]byte, error) {
	if list.Style&yaml.FlowStyle != 0 {
		list.Content = slices.Delete(list.Content, i, i+1)
		return Encode(doc)
	}
	lines := strings.SplitAfter(string(data), "\n")
	dash, end := entrySpan(lines, list, i)
	dashIndent := max(0, list.Content[i].Column-3)
	start := dash
	// Comments deeper than the dash are the previous entry's.
	for start > 0 && strings.HasPrefix(strings.TrimSpace(lines[start-1]), "#") && indentOf(lines[start-1]) <= dashIndent {
		start--
	}
	if start == 0 {
		start = dash // comments from the top of the file are the file's
	}
	return []byte(strings.Join(slices.Delete(lines, start, end), "")), nil
}

// entrySpan is where item i of a block list is among the file's lines
// (0-based, end exclusive): from its dash's line to the next item, less
// the blank lines and the comments at the dash's depth that end it (the
// next item's, or the file's). A comment deeper than the dash is the
// item's: yaml.v3 keeps it with the item's last key, and writes it back
// with the item.
func entrySpan(lines []string, list *yaml.Node, i int) (dash, end int) {
	dash = list.Content[i].Line - 1
	end = len(lines)
	if i+1 < len(list.Content) {
		end = list.Content[i+1].Line - 1
	}
	dashIndent := max(0, list.Content[i].Column-3)
	for end > dash+1 {
		line := lines[end-1]
		t := strings.TrimSpace(line)
		if t != "" && !(strings.HasPrefix(t, "#") && indentOf(line) <= dashIndent) {
			break
		}
		end--
	}
	return dash, end
}

// indentOf is the spaces line starts with.
func indentOf(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }

// Replace writes item i of a block list, changed in its node tree,
// over its lines: the comments inside it are kept by the encoder, those
// around it and every other line stay as they were. A flow list is
// rewritten from the node tree.
func Replace(data []byte, doc, list *yaml.Node, i int) ([]byte, error) {
	if list.Style&yaml.FlowStyle != 0 {
		return Encode(doc)
	}
	entry := list.Content[i]
	head, foot := entry.HeadComment, entry.FootComment
	entry.HeadComment, entry.FootComment = "", "" // they stay in the text around it
	text, err := Encode(&yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{entry}})
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

// Parse parses data, the text of the file at path (for messages), as a
// YAML document whose root is the list of entries; an empty file is a new, empty list.
func Parse(path string, data []byte) (*yaml.Node, *yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("%s: %v", path, err)
	}
	if doc.Kind == 0 { // empty, or only comments
		list := &yaml.Node{Kind: yaml.SequenceNode}
		doc = yaml.Node{Kind: yaml.DocumentNode, HeadComment: doc.HeadComment, Content: []*yaml.Node{list}}
	}
	list := doc.Content[0]
	if list.Kind == yaml.ScalarNode && list.Tag == "!!null" {
		// "---", "~" or "null": no entries, as the host reads it. The
		// text is written anew from the node tree, its comments kept.
		*list = yaml.Node{Kind: yaml.SequenceNode, HeadComment: list.HeadComment, LineComment: list.LineComment, FootComment: list.FootComment}
	}
	if list.Kind != yaml.SequenceNode {
		return nil, nil, fmt.Errorf("%s:%d:%d: the config must be a YAML list of entries", path, list.Line, list.Column)
	}
	if len(list.Content) == 0 {
		list.Style = 0 // "[]" becomes a block list once it has entries
	}
	return &doc, list, nil
}

// Encode writes a node tree as YAML indented by two spaces, comments
// kept.
func Encode(doc *yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}

// Write replaces path with data (atomicfile), so a reader (or
// serve's hot reload) sees the old file or the new one, never half of one.
// An existing file's permissions are kept; a new one is the owner's alone
// (0600), since an entry may hold header and env values.
func Write(path string, data []byte) error {
	mode := os.FileMode(0o600) // a new file: it may hold headers' and env values
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	return atomicfile.Write(path, data, mode)
}

// SetValue sets key of the mapping m to v, replacing its value or
// appending the pair.
func SetValue(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	AppendNode(m, key, v)
}
