package importconf

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Format is the kind of a config file.
type Format string

const (
	// FormatYAML is mcpbridge's own list of entries; nothing to convert.
	FormatYAML Format = "mcpbridge YAML"
	// FormatMCPServers is a JSON object with an "mcpServers" object (Claude
	// Desktop, Claude Code, Cursor, Gemini CLI, Cline, Windsurf).
	FormatMCPServers Format = "mcpServers JSON"
	// FormatCodex is a Codex config.toml with [mcp_servers.NAME] tables.
	FormatCodex Format = "Codex config.toml"
)

// codexTable finds the mcp_servers tables or keys of a TOML file.
var codexTable = regexp.MustCompile(`(?m)^[ \t]*(\[[ \t]*"?mcp_servers"?[ \t]*[.\]]|"?mcp_servers"?[ \t]*[.=])`)

// Detect tells the format of a config file by its content: a JSON object
// is mcpServers JSON, a file with mcp_servers tables is Codex TOML, and
// anything else is left to the YAML parser.
func Detect(data []byte) Format {
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\uFEFF")), " \t\r\n")
	switch {
	case bytes.HasPrefix(trimmed, []byte("{")), bytes.HasPrefix(trimmed, []byte("//")), bytes.HasPrefix(trimmed, []byte("/*")):
		return FormatMCPServers
	case codexTable.Match(data):
		return FormatCodex
	default:
		return FormatYAML
	}
}

// Pos is a 1-based position in the source file; zero when unknown.
type Pos struct{ Line, Column int }

// Note is a field of the source that has no exact counterpart: left out,
// or mapped in a way worth knowing.
type Note struct {
	Pos
	Server string // the server's key in the source, "" for the file
	// Entry is the id of the entry made of the server.
	Entry string
	// Mistake marks a field that is not left out but wrong, like a
	// misspelt "comand": the entry is invalid, with this note as its one
	// problem.
	Mistake bool
	Path    string // like mcpServers.github.autoApprove
	Msg     string
}

// Format renders the note as file:line:col: path: msg.
func (n Note) Format(file string) string {
	var b strings.Builder
	b.WriteString(file)
	if n.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", n.Line, n.Column)
	}
	fmt.Fprintf(&b, ": %s: %s", n.Path, n.Msg)
	return b.String()
}

// Result is a converted file.
type Result struct {
	Format Format
	// YAML is the equivalent mcpbridge config, one entry per server, with
	// a comment naming each server's source and notes.
	YAML  []byte
	Notes []Note
	// exact maps a position in YAML to the source; byLine a line.
	exact  map[Pos]Pos
	byLine map[int]Pos
	// paths names the value or key at a position of the source, like
	// mcpServers.web.url.
	paths map[Pos]string
}

// Position returns the source position of line:col of r.YAML: the node
// that starts there, else the first node on that line.
func (r *Result) Position(line, col int) (Pos, bool) {
	if p, ok := r.exact[Pos{line, col}]; ok {
		return p, true
	}
	p, ok := r.byLine[line]
	return p, ok
}

// lineRef is a message's reference to another line of the file, like
// host's "the entry at line 12 already uses it".
var lineRef = regexp.MustCompile(`\bline (\d+)\b`)

// SourceLines returns msg, a message about r.YAML, with each line of
// r.YAML it names ("line 12") replaced by the source's line there.
func (r *Result) SourceLines(msg string) string {
	return lineRef.ReplaceAllStringFunc(msg, func(ref string) string {
		n, _ := strconv.Atoi(strings.TrimPrefix(ref, "line "))
		if p, ok := r.byLine[n]; ok {
			return "line " + strconv.Itoa(p.Line)
		}
		return ref
	})
}

// SourcePath is the path in the source (like mcpServers.web.url) of the
// node that starts at line:col of r.YAML, when it was read from there; a
// node the conversion made up has the path of its server.
func (r *Result) SourcePath(line, col int) (string, bool) {
	p, ok := r.exact[Pos{line, col}]
	if !ok {
		return "", false
	}
	path, ok := r.paths[p]
	return path, ok
}

// ErrNotForeign is returned by Convert for mcpbridge's own YAML.
var ErrNotForeign = errors.New("not a foreign config")

// Convert turns a foreign config into mcpbridge YAML. filename is used
// in the comments only. It returns ErrNotForeign for FormatYAML, and an
// error naming file and position for a file it cannot read.
func Convert(filename string, data []byte) (*Result, error) {
	format := Detect(data)
	var servers []*server
	var notes []Note
	var paths map[Pos]string
	var err error
	switch format {
	case FormatMCPServers:
		servers, notes, paths, err = fromMCPServers(filename, data)
	case FormatCodex:
		servers, notes, paths, err = fromCodex(filename, data)
	default:
		return nil, ErrNotForeign
	}
	if err != nil {
		return nil, err
	}
	res, err := render(filename, format, servers, notes)
	if res != nil {
		res.paths = paths
	}
	return res, err
}

// server is one converted entry: its source key and position, and the
// config fields in mcpbridge's order, their nodes carrying source
// positions.
type server struct {
	key      string // as in the source
	id       string // the entry's id and serverName
	pos      Pos
	disabled bool
	fields   []field
}

type field struct {
	key   string
	value *yaml.Node
}

func (s *server) set(key string, value *yaml.Node) {
	s.fields = append(s.fields, field{key, value})
}

// field is the value set for key, or nil.
func (s *server) field(key string) *yaml.Node {
	for _, f := range s.fields {
		if f.key == key {
			return f.value
		}
	}
	return nil
}

// render writes the entries as YAML and maps the positions back.
func render(filename string, format Format, servers []*server, notes []Note) (*Result, error) {
	list := &yaml.Node{Kind: yaml.SequenceNode}
	for _, s := range servers {
		list.Content = append(list.Content, s.entry(filename, notes))
	}
	doc := &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{list},
		HeadComment: fmt.Sprintf("mcpbridge config converted from %s (%s)", filename, format)}
	if len(servers) == 0 {
		list.Style = yaml.FlowStyle
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("%s: writing the converted config: %w", filename, err) // untested: the nodes are well formed
	}
	r := &Result{Format: format, YAML: buf.Bytes(), Notes: notes, exact: map[Pos]Pos{}, byLine: map[int]Pos{}}
	var back yaml.Node
	if err := yaml.Unmarshal(r.YAML, &back); err != nil {
		return nil, fmt.Errorf("%s: reading the converted config back: %w", filename, err) // untested: yaml.v3 reads what it writes
	}
	r.mapPositions(doc, &back)
	return r, nil
}

// mapPositions walks the tree that was written (src, carrying source
// positions) beside the one read back (gen, carrying positions in YAML).
func (r *Result) mapPositions(src, gen *yaml.Node) {
	if src.Line > 0 {
		p := Pos{src.Line, src.Column}
		r.exact[Pos{gen.Line, gen.Column}] = p
		if _, ok := r.byLine[gen.Line]; !ok {
			r.byLine[gen.Line] = p
		}
	}
	for i := 0; i < len(src.Content) && i < len(gen.Content); i++ {
		r.mapPositions(src.Content[i], gen.Content[i])
	}
}

// entry is s as an mcp-client entry, its notes as a comment.
func (s *server) entry(filename string, notes []Note) *yaml.Node {
	at := func(n *yaml.Node) *yaml.Node { n.Line, n.Column = s.pos.Line, s.pos.Column; return n }
	cfg := at(&yaml.Node{Kind: yaml.MappingNode})
	for _, f := range s.fields {
		// The key is where its value is, so a problem of the key (given
		// twice) is told in the source's terms.
		cfg.Content = append(cfg.Content, strAt(f.key, Pos{f.value.Line, f.value.Column}), f.value)
	}
	e := at(&yaml.Node{Kind: yaml.MappingNode})
	e.Content = append(e.Content, str("id"), at(str(s.id)), str("name"), str("mcp-client"))
	if s.disabled {
		e.Content = append(e.Content, str("disabled"), &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"})
	}
	e.Content = append(e.Content, str("config"), cfg)
	comment := []string{fmt.Sprintf("%q from %s", s.key, filename)}
	if s.pos.Line > 0 {
		comment[0] += fmt.Sprintf(":%d", s.pos.Line)
	}
	for _, n := range notes {
		if n.Server == s.key {
			comment = append(comment, fmt.Sprintf("  %s: %s", n.Path, n.Msg))
		}
	}
	e.HeadComment = strings.Join(comment, "\n")
	return e
}

// str is a string scalar without a source position.
func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// strAt is a string scalar from position p of the source.
func strAt(s string, p Pos) *yaml.Node {
	n := str(s)
	n.Line, n.Column = p.Line, p.Column
	return n
}
