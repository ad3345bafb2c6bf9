package host_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/confpos"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
)

// ignoreNodes leaves the raw YAML nodes out of Entry comparisons; tests check
// them separately by position.
var ignoreNodes = cmpopts.IgnoreFields(host.Entry{}, "Config", "Node")

func TestParseEntries(t *testing.T) {
	src := `# two servers
- id: github
  name: mcp-client
  config:
    serverName: github
- {id: web.1, name: mcp-client, disabled: true, config: {serverName: web}}
- id: A-b_c.d
  name: other
  disabled: false
  config: ~
- &x
  id: aliased
  name: mcp-client
`
	got, err := host.ParseEntries("mcpbridge.yaml", []byte(src))
	if err != nil {
		t.Fatalf("ParseEntries: %v", err)
	}
	want := []host.Entry{
		{ID: "github", Name: "mcp-client", File: "mcpbridge.yaml", Line: 2, Column: 3},
		{ID: "web.1", Name: "mcp-client", Disabled: true, File: "mcpbridge.yaml", Line: 6, Column: 3},
		{ID: "A-b_c.d", Name: "other", File: "mcpbridge.yaml", Line: 7, Column: 3},
		{ID: "aliased", Name: "mcp-client", File: "mcpbridge.yaml", Line: 11, Column: 3},
	}
	if diff := cmp.Diff(want, got, ignoreNodes); diff != "" {
		t.Fatalf("entries (-want +got):\n%s", diff)
	}
	for i, wantLine := range []int{5, 6, -1, -1} {
		c := got[i].Config
		switch {
		case wantLine < 0 && c != nil:
			t.Errorf("entry %q: Config = node at line %d, want nil", got[i].ID, c.Line)
		case wantLine > 0 && (c == nil || c.Kind != yaml.MappingNode || c.Line != wantLine):
			t.Errorf("entry %q: Config = %+v, want the mapping at line %d", got[i].ID, c, wantLine)
		}
		if n := got[i].Node; n == nil || n.Line != got[i].Line || n.Column != got[i].Column {
			t.Errorf("entry %q: Node does not match the entry position", got[i].ID)
		}
	}
}

func TestParseEntriesEmpty(t *testing.T) {
	for _, src := range []string{"", "# only a comment\n", "[]", "~", "---\n", "null"} {
		got, err := host.ParseEntries("f.yaml", []byte(src))
		if err != nil || len(got) != 0 {
			t.Errorf("ParseEntries(%q) = %v, %v; want no entries and no error", src, got, err)
		}
	}
}

func TestParseEntriesErrors(t *testing.T) {
	long := strings.Repeat("a", 64)
	tests := []struct {
		name string
		src  string
		want string
	}{
		{"not a list", "id: github\nname: mcp-client",
			`f.yaml:1:1: the file must be a YAML list of entries (- id: …, name: …, config: …), got a mapping`},
		{"scalar file", "hello",
			`f.yaml:1:1: the file must be a YAML list of entries (- id: …, name: …, config: …), got a string`},
		// The line is yaml.v3's: where the enclosing construct starts, and
		// for some parser errors one line early.
		{"syntax error", "- id: a\n  name: [x",
			`f.yaml:2:9: invalid YAML: did not find expected ',' or ']'`},
		// yaml.v3 leaves the line out on the first line.
		{"syntax error on the first line", `"`,
			`f.yaml:1:1: invalid YAML: found unexpected end of stream`},
		{"scanner error", "- id: a\n  name: x\n  bad: @x",
			`f.yaml:3:8: invalid YAML: found character that cannot start any token`},
		// yaml.v3 gives these no line; the host finds line and column.
		{"control character", "- id: \"a\x01\"",
			`f.yaml:1:9: invalid YAML: control characters are not allowed`},
		{"invalid UTF-8", "- id: a\n  name: \"x\xff\"",
			`f.yaml:2:11: invalid YAML: invalid leading UTF-8 octet`},
		{"unknown anchor as a key", "a: 1\n*cfg: 2",
			`f.yaml:2:1: invalid YAML: unknown anchor 'cfg' referenced`},
		{"UTF-16 non-character", "\xfe\xff\x00a\xff\xfe",
			`f.yaml:1:2: invalid YAML: control characters are not allowed`},
		{"unknown anchor", "- id: a\n  name: x\n  config: *cfg",
			`f.yaml:3:11: invalid YAML: unknown anchor 'cfg' referenced`},
		{"second document", "- id: a\n  name: x\n---\n- id: b\n  name: x",
			`f.yaml:3:1: found a second YAML document (---): the file must hold exactly one list of entries`},
		{"syntax error in second document", "- id: a\n  name: x\n---\n- [",
			`f.yaml:4:3: invalid YAML: did not find expected node content`},
		{"id missing", "- name: mcp-client",
			`f.yaml:1:3: entry #1: id: is required: a unique name for this entry, used to match it across reloads (like "github")`},
		{"id not a string", "- id: [a]\n  name: mcp-client",
			`f.yaml:1:7: entry #1: id: must be a string, got a list`},
		{"id empty", "- id: ''\n  name: mcp-client",
			`f.yaml:1:7: entry #1: id: "" is not a valid id: use 1 to 64 letters, digits, "_", "." or "-", starting with a letter or digit`},
		{"id too long", "- id: " + long + "a\n  name: mcp-client",
			`f.yaml:1:7: entry #1: id: "` + long + `a" is not a valid id: use 1 to 64 letters, digits, "_", "." or "-", starting with a letter or digit`},
		{"id starts with a dot", "- id: .a\n  name: mcp-client",
			`f.yaml:1:7: entry #1: id: ".a" is not a valid id: use 1 to 64 letters, digits, "_", "." or "-", starting with a letter or digit`},
		{"id with a space", "- id: a b\n  name: mcp-client",
			`f.yaml:1:7: entry #1: id: "a b" is not a valid id: use 1 to 64 letters, digits, "_", "." or "-", starting with a letter or digit`},
		{"duplicate id names both lines", "- id: gh\n  name: x\n- id: ok\n  name: x\n- id: gh\n  name: x",
			`f.yaml:5:7: entry "gh": id: duplicate id "gh": the entry at line 1 already uses it, and ids must be unique`},
		{"name missing", "- id: a",
			`f.yaml:1:3: entry "a": name: is required: the plugin to run (like "mcp-client")`},
		{"name empty", "- id: a\n  name: ''",
			`f.yaml:2:9: entry "a": name: must not be empty: it names the plugin to run (like "mcp-client")`},
		{"name not a string", "- id: a\n  name: 1",
			`f.yaml:2:9: entry "a": name: must be a string, got the integer 1 (quote it: "1")`},
		{"unknown key", "- id: a\n  name: x\n  confg: {}",
			`f.yaml:3:3: entry "a": confg: unknown key "confg" (did you mean "config"?)`},
		{"upstream overlay syntax", "- insert:\n  - id: a\n    name: x",
			"f.yaml:1:3: entry #1: insert: unknown key \"insert\"\n" +
				"f.yaml:1:3: entry #1: id: is required: a unique name for this entry, used to match it across reloads (like \"github\")\n" +
				"f.yaml:1:3: entry #1: name: is required: the plugin to run (like \"mcp-client\")"},
		{"disabled not a bool", "- id: a\n  name: x\n  disabled: 'yes'",
			`f.yaml:3:13: entry "a": disabled: must be true or false, got a string`},
		{"config not a mapping", "- id: a\n  name: x\n  config: serverName",
			`f.yaml:3:11: entry "a": config: must be a mapping of the plugin's settings, got a string`},
		{"entry not a mapping", "- [id, a]",
			`f.yaml:1:3: entry #1: an entry must be a mapping with id, name and config, got a list`},
		{"duplicate key", "- id: a\n  name: x\n  name: y",
			`f.yaml:3:3: entry "a": name: duplicate key "name" (first defined at line 2)`},
		{"every entry, in file order", "- id: a\n  name: x\n  bogus: 1\n- name: y\n- id: a\n  name: z",
			"f.yaml:3:3: entry \"a\": bogus: unknown key \"bogus\"\n" +
				"f.yaml:4:3: entry #2: id: is required: a unique name for this entry, used to match it across reloads (like \"github\")\n" +
				"f.yaml:5:7: entry \"a\": id: duplicate id \"a\": the entry at line 1 already uses it, and ids must be unique"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := host.ParseEntries("f.yaml", []byte(tt.src))
			if err == nil {
				t.Fatalf("ParseEntries succeeded with %d entries; want:\n%s", len(got), tt.want)
			}
			if got != nil {
				t.Errorf("ParseEntries returned entries along with an error: %+v", got)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			var ce *confpos.Error
			if !errors.As(err, &ce) || ce.File != "f.yaml" {
				t.Errorf("error %T does not unwrap to a *confpos.Error for f.yaml", err)
			}
		})
	}
}

func TestConfigErrorRendering(t *testing.T) {
	tests := []struct {
		e    confpos.Error
		want string
	}{
		{confpos.Error{File: "m.yaml", Line: 12, Column: 5, EntryID: "github", Path: "config", Msg: "bad"},
			`m.yaml:12:5: entry "github": config: bad`},
		{confpos.Error{File: "m.yaml", Line: 12, EntryIndex: 3, Msg: "bad"}, `m.yaml:12: entry #3: bad`},
		{confpos.Error{File: "m.yaml", Msg: "bad"}, `m.yaml: bad`},
		{confpos.Error{File: "m.yaml", Line: 1, Column: 1, EntryID: "a", EntryIndex: 1, Msg: "bad"}, `m.yaml:1:1: entry "a": bad`},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

// entryOf parses a one-entry file.
func entryOf(t *testing.T, src string) host.Entry {
	t.Helper()
	entries, err := host.ParseEntries("m.yaml", []byte(src))
	if err != nil || len(entries) != 1 {
		t.Fatalf("ParseEntries = %v, %v", entries, err)
	}
	return entries[0]
}

func TestFormatErrors(t *testing.T) {
	e := entryOf(t, "# comment\n- id: github\n  name: mcp-client\n  config:\n    serverName: x\n")
	positioned := yamlconf.Errors{
		{Line: 5, Column: 17, Path: "config.serverName", Msg: "is bad"},
		{Path: "config", Msg: "is required"},
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"positioned, and one without a position", positioned,
			"m.yaml:5:17: entry \"github\": config.serverName: is bad\n" +
				"m.yaml:2:3: entry \"github\": config: is required"},
		{"single wrapped *yamlconf.Error", fmt.Errorf("decoding: %w", positioned[0]),
			`m.yaml:5:17: entry "github": config.serverName: is bad`},
		{"plain error goes at the entry", errors.New("plugin exploded"),
			`m.yaml:2:3: entry "github": plugin exploded`},
		{"already formatted passes through", confpos.Errors{{File: "other.yaml", Line: 1, Msg: "x"}},
			`other.yaml:1: x`},
		{"a wrapped formatted one passes through", fmt.Errorf("checking: %w", &confpos.Error{File: "other.yaml", Line: 1, EntryID: "o", Msg: "x"}),
			`other.yaml:1: entry "o": x`},
		{"a kind's entry fields give way to the host's", yamlconf.Errors{{Line: 5, Column: 17, EntryID: "spoof", EntryIndex: 9, Msg: "x"}},
			`m.yaml:5:17: entry "github": x`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := host.FormatErrors("m.yaml", e, tt.err)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("FormatErrors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEntryError(t *testing.T) {
	e := entryOf(t, "- id: github\n  name: mcp-client\n  config:\n    serverName: gh\n")
	tests := []struct {
		name  string
		entry host.Entry
		path  string
		want  string
	}{
		{"field in config", e, "config.serverName", `m.yaml:4:17: entry "github": config.serverName: taken`},
		{"entry field", e, "name", `m.yaml:2:9: entry "github": name: taken`},
		{"absent field points at its parent", e, "config.url", `m.yaml:4:5: entry "github": config.url: taken`},
		{"entry built in Go, without a node", host.Entry{ID: "x", Line: 7, Column: 3}, "name", `m.yaml:7:3: entry "x": name: taken`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := host.EntryError("m.yaml", tt.entry, tt.path, "taken")
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("EntryError (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfigErrorsUnwrap(t *testing.T) {
	a := &confpos.Error{File: "f", Msg: "a"}
	b := &confpos.Error{File: "f", Msg: "b"}
	es := confpos.Errors{a, b}
	if diff := cmp.Diff([]error{a, b}, es.Unwrap()); diff != "" {
		t.Errorf("Unwrap (-want +got):\n%s", diff)
	}
	if got, want := es.Error(), "f: a\nf: b"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func ExampleParseEntries() {
	src := `
- id: github
  name: mcp-client
  config: {serverName: github, transport: stdio, command: github-mcp-server}
- id: github
  name: mcp-client
`
	_, err := host.ParseEntries("mcpbridge.yaml", []byte(src))
	fmt.Println(err)
	// Output:
	// mcpbridge.yaml:5:7: entry "github": id: duplicate id "github": the entry at line 2 already uses it, and ids must be unique
}

// YAML syntax errors carry the line and column of the mistake, not
// yaml.v3's line of the enclosing construct.
func TestSyntaxErrorPlace(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		// An entry's key dedented by one: yaml.v3 says line 4.
		{"- id: a\n  name: mcp-client\n  config:\n    serverName: a\n   transport: stdio\n", "f.yaml:5:4: invalid YAML: did not find expected key"},
		// A key indented too far continues the value above it.
		{"- id: a\n  name: mcp-client\n  config:\n    transport: stdio\n      command: x\n", "f.yaml:5:14: invalid YAML: mapping values are not allowed in this context"},
		{"- id: a\n\tname: x\n", "f.yaml:2:1: invalid YAML: found a tab character that violates indentation"},
	} {
		_, err := host.ParseEntries("f.yaml", []byte(c.src))
		if err == nil || err.Error() != c.want {
			t.Errorf("%q:\n got %v\nwant %s", c.src, err, c.want)
		}
	}
}
