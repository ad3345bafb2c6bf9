package host

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/confpos"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
)

// Entry is one item of the composition file's list.
type Entry struct {
	// ID identifies the entry across reloads; unique within the file.
	ID string
	// Name is the plugin kind, e.g. "mcp-client".
	Name string
	// Disabled entries are parsed and kept, but not run.
	Disabled bool
	// Config is the raw config mapping, for the plugin to decode (nil if
	// absent or null).
	Config *yaml.Node
	// File is the name of the file the entry came from, as the caller of
	// ParseEntries (or Catalog.Parse) gave it.
	File string
	// Line and Column are the position of the entry in the file (1-based).
	Line, Column int
	// Node is the entry's whole mapping, so that errors about any of its
	// fields (EntryError) can point at the field itself.
	Node *yaml.Node
}

// FormatErrors puts filename and entry in front of the problems a plugin
// found in entry's config (the confpos.Errors of a Kind's Decode, such as
// those of mcpclient.DecodeConfig), keeping their positions; a problem
// without one, or an error that is not a confpos error, is placed at the
// entry. It returns [confpos.Errors], or nil for a nil err.
func FormatErrors(filename string, entry Entry, err error) error {
	if err == nil {
		return nil
	}
	es := confpos.AsErrors(err)
	if es == nil {
		es = confpos.Errors{{Msg: err.Error()}}
	}
	if placed(es) {
		return es
	}
	out := make(confpos.Errors, len(es))
	for i, e := range es {
		ce := &confpos.Error{File: filename, Line: e.Line, Column: e.Column, EntryID: entry.ID, Path: e.Path, Msg: e.Msg}
		if ce.Line == 0 {
			ce.Line, ce.Column = entry.Line, entry.Column
		}
		out[i] = ce
	}
	return out
}

// placed reports whether the host has already put es in its file: a
// Kind's errors name none.
func placed(es confpos.Errors) bool {
	return !slices.ContainsFunc(es, func(e *confpos.Error) bool { return e.File == "" })
}

// EntryError reports a problem found outside the YAML decoding, such as a
// serverName used by two entries or an unknown plugin name, at the field path
// (name, config.serverName) of entry, or at the entry when the field is absent.
func EntryError(filename string, entry Entry, path, msg string) error {
	line, col := entry.Line, entry.Column
	if n := yamlconf.Locate(entry.Node, path); n != nil {
		line, col = n.Line, n.Column
	}
	return confpos.Errors{{File: filename, Line: line, Column: col, EntryID: entry.ID, Path: path, Msg: msg}}
}

// MaxConfigBytes is the size of the largest composition file
// ReadConfigFile reads: 4 MiB, hundreds of times a real file (a thousand
// entries take about 200 KiB), and little enough memory to refuse a wrong
// path (a log, a device) without reading it whole.
const MaxConfigBytes = 4 << 20

// ReadConfigFile reads the composition file at path, at most MaxConfigBytes
// of it: a larger file is refused with an error naming it, after reading no
// more than one byte past the limit. An error from opening the file wraps
// the *fs.PathError, so errors.Is(err, fs.ErrNotExist) tells a missing
// file; its text says which file cannot be read, why and what to check.
func ReadConfigFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, unreadable(path, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigBytes+1))
	if err != nil {
		return nil, unreadable(path, err)
	}
	if len(data) > MaxConfigBytes {
		return nil, fmt.Errorf("config file %s is larger than %d MiB: a composition file is a short YAML list of entries", path, MaxConfigBytes>>20)
	}
	return data, nil
}

// entryKeys are the keys an entry may have.
func entryKeys() []string { return []string{"id", "name", "config", "disabled"} }

// ParseEntries parses a composition file: a YAML list of entries
// {id, name, config, disabled}. filename is used only in error messages. An
// empty file, a file of comments and [] all mean no entries. Every problem of
// every entry is returned at once, as [confpos.Errors]; on error no entries are
// returned, so a caller never runs half a file.
//
// id is required (entries are diffed by id on reload), must match
// ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$ and be unique; name is required; config
// must be a mapping when present; unknown keys are errors. config itself is
// not interpreted: the plugin named by name decodes it.
func ParseEntries(filename string, data []byte) ([]Entry, error) {
	pes, errs := parseEntries(filename, data)
	entries := make([]Entry, 0, len(pes))
	for _, pe := range pes {
		if pe.Err != nil {
			errs = append(errs, pe.Err.(confpos.Errors)...)
		}
		entries = append(entries, pe.Entry)
	}
	if len(errs) > 0 {
		sortErrors(errs)
		return nil, errs
	}
	return entries, nil
}

// parseEntries is ParseEntries returning every entry that has a usable id,
// the invalid ones with their problems in Err, and apart the problems that
// concern no such entry (fileErrs): invalid YAML, a file that is not a
// list, an entry without a valid id, an id used twice. Catalog.Parse goes
// on to check the configs and reports every problem at once;
// Catalog.ParseIsolated runs the valid entries.
func parseEntries(filename string, data []byte) (entries []PlanEntry, fileErrs confpos.Errors) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, confpos.Errors{syntaxError(filename, data, err)}
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, confpos.Errors{{File: filename, Line: extra.Line, Column: extra.Column,
			Msg: "found a second YAML document (---): the file must hold exactly one list of entries"}}
	case !errors.Is(err, io.EOF):
		return nil, confpos.Errors{syntaxError(filename, data, err)}
	}
	root := yamlconf.Resolve(doc.Content[0])
	if yamlconf.IsNull(root) {
		return nil, nil
	}
	if root.Kind != yaml.SequenceNode {
		return nil, confpos.Errors{{File: filename, Line: root.Line, Column: root.Column,
			Msg: fmt.Sprintf("the file must be a YAML list of entries (- id: …, name: …, config: …), got %s", yamlconf.Describe(root))}}
	}

	entries = make([]PlanEntry, 0, len(root.Content))
	firstLine := map[string]int{} // id → line of the entry that has it
	for i, item := range root.Content {
		item = yamlconf.Resolve(item)
		d := yamlconf.NewDecoder(nil)
		e, idOK := parseEntry(d, item, firstLine)
		e.File = filename
		errs := entryErrors(filename, d.Err(), e.ID, idOK, i+1)
		switch {
		case len(errs) == 0:
			entries = append(entries, PlanEntry{Entry: e})
		case idOK && !d.Failed("id"):
			entries = append(entries, PlanEntry{Entry: e, Err: errs})
		default: // no id to run the others by
			fileErrs = append(fileErrs, errs...)
		}
	}
	sortErrors(fileErrs)
	return entries, fileErrs
}

// entryErrors positions the problems a decoder found in the entry at
// index (1-based), named by id when idOK.
func entryErrors(filename string, err error, id string, idOK bool, index int) confpos.Errors {
	var errs confpos.Errors
	for _, p := range yamlconf.AsErrors(err) {
		ce := &confpos.Error{File: filename, Line: p.Line, Column: p.Column, Path: p.Path, Msg: p.Msg}
		if idOK {
			ce.EntryID = id
		} else {
			ce.EntryIndex = index
		}
		errs = append(errs, ce)
	}
	return errs
}

// sortErrors puts problems in file order.
func sortErrors(errs confpos.Errors) {
	slices.SortStableFunc(errs, func(a, b *confpos.Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
}

// parseEntry decodes one list item, recording problems in d. idOK reports
// whether the entry has a valid id to name it by in messages. firstLine
// collects ids seen so far, to report duplicates with both lines.
func parseEntry(d *yamlconf.Decoder, item *yaml.Node, firstLine map[string]int) (e Entry, idOK bool) {
	e = Entry{Line: item.Line, Column: item.Column, Node: item}
	if item.Kind != yaml.MappingNode {
		d.Errorf(item, "", "an entry must be a mapping with id, name and config, got %s", yamlconf.Describe(item))
		return e, false
	}
	m, _ := d.Map(item, "")
	m.Reject(entryKeys()...)

	id, ok := m.String("id")
	switch {
	case ok && validID(id):
		e.ID, idOK = id, true
		if line, dup := firstLine[id]; dup {
			m.Errorf("id", "duplicate id %q: the entry at line %d already uses it, and ids must be unique", id, line)
		} else {
			firstLine[id] = e.Line
		}
	case ok:
		m.Errorf("id", "%q is not a valid id: use 1 to 64 letters, digits, \"_\", \".\" or \"-\", starting with a letter or digit", id)
	case !d.Failed(m.Path("id")):
		m.Errorf("id", "is required: a unique name for this entry, used to match it across reloads (like %q)", "github")
	}

	name, ok := m.String("name")
	switch {
	case ok && name != "":
		e.Name = name
	case ok:
		m.Errorf("name", "must not be empty: it names the plugin to run (like %q)", "mcp-client")
	case !d.Failed(m.Path("name")):
		m.Errorf("name", "is required: the plugin to run (like %q)", "mcp-client")
	}

	e.Disabled, _ = m.Bool("disabled")

	if cfg := m.Value("config"); !yamlconf.IsNull(cfg) {
		if cfg.Kind != yaml.MappingNode {
			m.Errorf("config", "must be a mapping of the plugin's settings, got %s", yamlconf.Describe(cfg))
		} else {
			e.Config = cfg
		}
	}
	return e, idOK
}

// validID reports whether id matches ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$.
func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || c != '_' && c != '.' && c != '-') {
			return false
		}
	}
	return true
}

// syntaxError turns a yaml.v3 syntax error ("yaml: line 3: did not find
// expected key") into a positioned [confpos.Error]. yaml.v3's line is often
// where the enclosing construct starts, and for some parser errors one line
// early; it gives no column, and leaves the line out for a problem on the
// first line. yamlconf.PinpointSyntaxError puts it right, with a column. The errors yaml.v3 gives without a
// line (invalid UTF-8, a control character, an alias of an unknown anchor)
// are located in data, with line and column.
func syntaxError(filename string, data []byte, err error) *confpos.Error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	ce := &confpos.Error{File: filename}
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, text, ok := strings.Cut(rest, ": "); ok {
			if line, err := strconv.Atoi(num); err == nil {
				ce.Line, msg = line, text
			}
		}
	}
	if ce.Line == 0 {
		var ok bool
		ce.Line, ce.Column, ok = yamlconf.LocateSyntaxError(data, msg)
		if !ok && yamlconf.OnFirstLine(msg) {
			ce.Line = 1 // yaml.v3 leaves out "line 1: " (see OnFirstLine)
		}
	}
	if ce.Column == 0 {
		if line, col, ok := yamlconf.PinpointSyntaxError(data, ce.Line, msg); ok {
			ce.Line, ce.Column = line, col
		}
	}
	ce.Msg = "invalid YAML: " + msg
	if !strings.Contains(msg, "tab") {
		ce.Msg += tabHint(data, ce.Line)
	}
	return ce
}

// tabHint explains a syntax error on a line that a tab indents, the
// commonest cause of yaml.v3's "found character that cannot start any
// token"; "" for other lines.
func tabHint(data []byte, line int) string {
	lines := strings.Split(string(data), "\n")
	if line < 1 || line > len(lines) {
		return ""
	}
	text := lines[line-1]
	if indent := text[:len(text)-len(strings.TrimLeft(text, " \t"))]; !strings.Contains(indent, "\t") {
		return ""
	}
	return " (this line is indented with a tab: YAML indents with spaces only)"
}
