package yamlconf_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
)

// parse returns the root node of src.
func parse(t *testing.T, src string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatalf("parsing test YAML: %v", err)
	}
	return doc.Content[0]
}

// errText renders err for comparison; "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestGetters(t *testing.T) {
	lookup := env(map[string]string{"TOKEN": secret, "HOST": "example.test"})
	str := func(m *yamlconf.Map) (any, bool) { return m.String("a") }
	expStr := func(m *yamlconf.Map) (any, bool) { return m.ExpandString("a") }
	boolean := func(m *yamlconf.Map) (any, bool) { return m.Bool("a") }
	integer := func(m *yamlconf.Map) (any, bool) { return m.Int("a", 1, 100) }
	list := func(m *yamlconf.Map) (any, bool) { return m.StringList("a") }
	expList := func(m *yamlconf.Map) (any, bool) { return m.ExpandStringList("a") }
	smap := func(m *yamlconf.Map) (any, bool) { return m.StringMap("a") }
	expMap := func(m *yamlconf.Map) (any, bool) { return m.ExpandStringMap("a") }

	tests := []struct {
		name    string
		src     string
		get     func(*yamlconf.Map) (any, bool)
		want    any
		wantOK  bool
		wantErr string
	}{
		// String
		{name: "string", src: "a: x", get: str, want: "x", wantOK: true},
		{name: "quoted number is a string", src: `a: "8080"`, get: str, want: "8080", wantOK: true},
		{name: "date is a string", src: "a: 2025-11-25", get: str, want: "2025-11-25", wantOK: true},
		{name: "alias", src: "b: &x hi\na: *x", get: str, want: "hi", wantOK: true},
		{name: "string missing", src: "b: x", get: str, want: ""},
		{name: "string null", src: "a: ~", get: str, want: ""},
		{name: "string empty value", src: "a:", get: str, want: ""},
		{name: "string not expanded", src: "a: ${TOKEN}", get: str, want: "${TOKEN}", wantOK: true},
		{name: "integer for string", src: "a: 8080", get: str, want: "8080", wantOK: true,
			wantErr: `1:4: a: must be a string, got the integer 8080 (quote it: "8080")`},
		{name: "float for string", src: "a: 1.5", get: str, want: "1.5", wantOK: true,
			wantErr: `1:4: a: must be a string, got the number 1.5 (quote it: "1.5")`},
		{name: "bool for string", src: "a: true", get: str, want: "true", wantOK: true,
			wantErr: `1:4: a: must be a string, got the boolean true (quote it: "true")`},
		{name: "list for string", src: "a: [x]", get: str, want: "",
			wantErr: `1:4: a: must be a string, got a list`},
		{name: "mapping for string", src: "a: {x: y}", get: str, want: "",
			wantErr: `1:4: a: must be a string, got a mapping`},
		{name: "custom tag", src: "a: !!js process.cwd()", get: str, want: "",
			wantErr: `1:4: a: must be a string, got a value tagged !!js (custom tags are not supported)`},

		// ExpandString
		{name: "expand", src: "a: Bearer ${TOKEN}", get: expStr, want: "Bearer " + secret, wantOK: true},
		{name: "expand unset", src: "a: ${NOPE}", get: expStr, want: "",
			wantErr: `1:4: a: environment variable "NOPE" is not set (use ${NOPE:-default} for a fallback)`},
		{name: "expand two problems", src: "a: ${X}${Y}", get: expStr, want: "",
			wantErr: "1:4: a: environment variable \"X\" is not set (use ${X:-default} for a fallback)\n" +
				"1:4: a: environment variable \"Y\" is not set (use ${Y:-default} for a fallback)"},
		{name: "expand non-string", src: "a: 5", get: expStr, want: "5", wantOK: true,
			wantErr: `1:4: a: must be a string, got the integer 5 (quote it: "5")`},
		{name: "expand null", src: "a: null", get: expStr, want: ""},

		// Bool
		{name: "true", src: "a: true", get: boolean, want: true, wantOK: true},
		{name: "false", src: "a: false", get: boolean, want: false, wantOK: true},
		{name: "bool missing", src: "b: 1", get: boolean, want: false},
		{name: "yes is not a bool", src: "a: yes", get: boolean, want: false,
			wantErr: `1:4: a: must be true or false, got a string`},
		{name: "quoted true", src: `a: "true"`, get: boolean, want: false,
			wantErr: `1:4: a: must be true or false, got a string`},
		{name: "number for bool", src: "a: 1", get: boolean, want: false,
			wantErr: `1:4: a: must be true or false, got the integer 1`},
		{name: "tagged non-bool", src: "a: !!bool maybe", get: boolean, want: false,
			wantErr: `1:4: a: must be true or false, got the boolean maybe`},

		// Int
		{name: "int", src: "a: 10", get: integer, want: int64(10), wantOK: true},
		{name: "int bounds", src: "a: 100", get: integer, want: int64(100), wantOK: true},
		{name: "hex", src: "a: 0x1F", get: integer, want: int64(31), wantOK: true},
		{name: "underscores", src: "a: 1_0", get: integer, want: int64(10), wantOK: true},
		{name: "int missing", src: "b: 1", get: integer, want: int64(0)},
		{name: "int null", src: "a: ~", get: integer, want: int64(0)},
		{name: "int below", src: "a: 0", get: integer, want: int64(0),
			wantErr: `1:4: a: must be between 1 and 100, got 0`},
		{name: "int above", src: "a: 101", get: integer, want: int64(0),
			wantErr: `1:4: a: must be between 1 and 100, got 101`},
		{name: "fraction", src: "a: 1.5", get: integer, want: int64(0),
			wantErr: `1:4: a: must be an integer, got the number 1.5`},
		{name: "integral float", src: "a: 1.0", get: integer, want: int64(0),
			wantErr: `1:4: a: must be an integer, got the number 1.0`},
		{name: "exponent", src: "a: 1e3", get: integer, want: int64(0),
			wantErr: `1:4: a: must be an integer, got the number 1e3`},
		{name: "infinity", src: "a: .inf", get: integer, want: int64(0),
			wantErr: `1:4: a: must be an integer, got the number .inf`},
		{name: "huge", src: "a: 99999999999999999999", get: integer, want: int64(0),
			wantErr: `1:4: a: is out of range, got 99999999999999999999`},
		{name: "huge tagged", src: "a: !!int 99999999999999999999", get: integer, want: int64(0),
			wantErr: `1:4: a: is out of range, got 99999999999999999999`},
		{name: "malformed tagged", src: "a: !!int foo", get: integer, want: int64(0),
			wantErr: `1:4: a: must be an integer, got a malformed !!int value`},
		{name: "huge hex", src: "a: 0xFFFFFFFFFFFFFFFFFF", get: integer, want: int64(0),
			wantErr: `1:4: a: must be an integer, got a string`},
		{name: "leading zero", src: "a: 017", get: integer, want: int64(0),
			wantErr: `1:4: a: must not have a leading zero, got 017 (write 17, or 0o17 for octal)`},
		{name: "quoted int", src: `a: "10"`, get: integer, want: int64(0),
			wantErr: `1:4: a: must be an integer, got a string (remove the quotes)`},
		{name: "word for int", src: `a: ten`, get: integer, want: int64(0),
			wantErr: `1:4: a: must be an integer, got a string`},
		{name: "list for int", src: `a: [1]`, get: integer, want: int64(0),
			wantErr: `1:4: a: must be an integer, got a list`},

		// StringList
		{name: "list", src: "a: [x, y]", get: list, want: []string{"x", "y"}, wantOK: true},
		{name: "empty list", src: "a: []", get: list, want: []string{}, wantOK: true},
		{name: "list null", src: "a: ~", get: list, want: []string(nil)},
		{name: "list not expanded", src: "a: ['${TOKEN}']", get: list, want: []string{"${TOKEN}"}, wantOK: true},
		{name: "list with number", src: "a: [x, 1, true]", get: list, want: []string(nil),
			wantErr: "1:8: a[1]: must be a string, got the integer 1 (quote it: \"1\")\n" +
				"1:11: a[2]: must be a string, got the boolean true (quote it: \"true\")"},
		{name: "list with null", src: "a:\n  - x\n  - ~", get: list, want: []string(nil),
			wantErr: "3:5: a[1]: must be a string, got null"},
		{name: "scalar for list", src: "a: x", get: list, want: []string(nil),
			wantErr: "1:4: a: must be a list of strings, got a string"},
		{name: "expand list", src: "a: [-H, 'Authorization: ${TOKEN}']", get: expList,
			want: []string{"-H", "Authorization: " + secret}, wantOK: true},
		{name: "expand list unset", src: "a: [x, '${NOPE}']", get: expList, want: []string(nil),
			wantErr: `1:8: a[1]: environment variable "NOPE" is not set (use ${NOPE:-default} for a fallback)`},

		// StringMap
		{name: "map", src: "a: {K: v, L: w}", get: smap, want: map[string]string{"K": "v", "L": "w"}, wantOK: true},
		{name: "map null", src: "a:", get: smap, want: map[string]string(nil)},
		{name: "map number value", src: "a:\n  PORT: 8080", get: smap, want: map[string]string(nil),
			wantErr: `2:9: a.PORT: must be a string, got the integer 8080 (quote it: "8080")`},
		{name: "map null value", src: "a:\n  PORT:", get: smap, want: map[string]string(nil),
			wantErr: `2:8: a.PORT: must be a string, got null`},
		{name: "map duplicate key", src: "a:\n  K: v\n  K: w", get: smap, want: map[string]string(nil),
			wantErr: `3:3: a.K: duplicate key "K" (first defined at line 2)`},
		{name: "map dotted key", src: "a: {'x.y': v}", get: smap, want: map[string]string{"x.y": "v"}, wantOK: true},
		{name: "list for map", src: "a: [x]", get: smap, want: map[string]string(nil),
			wantErr: `1:4: a: must be a mapping of strings to strings, got a list`},
		{name: "expand map values not keys", src: "a: {'${HOST}': '${TOKEN}'}", get: expMap,
			want: map[string]string{"${HOST}": secret}, wantOK: true},
		{name: "expand map unset", src: "a: {K: '${NOPE}'}", get: expMap, want: map[string]string(nil),
			wantErr: `1:8: a.K: environment variable "NOPE" is not set (use ${NOPE:-default} for a fallback)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := yamlconf.NewDecoder(lookup)
			m, ok := d.Map(parse(t, tt.src), "")
			if !ok {
				t.Fatalf("Map failed: %v", d.Err())
			}
			got, gotOK := tt.get(m)
			err := errText(d.Err())
			if diff := cmp.Diff(tt.wantErr, err); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if strings.Contains(err, secret) {
				t.Errorf("error text contains the expanded secret: %q", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("value (-want +got):\n%s", diff)
			}
			if gotOK != tt.wantOK {
				t.Errorf("ok = %v, want %v", gotOK, tt.wantOK)
			}
		})
	}
}

// A number where a string goes is said to need quotes unless the caller
// then finds its text wrong too: its problem replaces the hint, and the
// value has failed only then.
func TestQuoteHintOnlyWhenQuotingWouldDo(t *testing.T) {
	d := yamlconf.NewDecoder(nil)
	m, _ := d.Map(parse(t, "a: 5\nb: 6"), "")
	a, _ := m.String("a")
	b, _ := m.String("b")
	if d.Failed("a") || a != "5" || b != "6" {
		t.Fatalf("a %q b %q, failed %v", a, b, d.Failed("a"))
	}
	m.Errorf("a", "must be a duration, like 5s; got %q", a)
	want := "1:4: a: must be a duration, like 5s; got \"5\"\n2:4: b: must be a string, got the integer 6 (quote it: \"6\")"
	if got := errText(d.Err()); got != want || !d.Failed("a") {
		t.Errorf("errors:\n%s\nwant\n%s", got, want)
	}
}

func TestMapStrictness(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		allowed  []string
		wantKeys []string
		wantErr  string
	}{
		{name: "all known", src: "a: 1\nb: 2", allowed: []string{"a", "b"}, wantKeys: []string{"a", "b"}},
		{name: "unknown with suggestion", src: "serverNme: x\ntransport: stdio", allowed: []string{"serverName", "transport"},
			wantKeys: []string{"serverNme", "transport"},
			wantErr:  `1:1: serverNme: unknown key "serverNme" (did you mean "serverName"?)`},
		{name: "case typo", src: "servername: x", allowed: []string{"serverName"},
			wantKeys: []string{"servername"},
			wantErr:  `1:1: servername: unknown key "servername" (did you mean "serverName"?)`},
		{name: "unknown without suggestion", src: "foo: 1", allowed: []string{"serverName"},
			wantKeys: []string{"foo"},
			wantErr:  `1:1: foo: unknown key "foo"`},
		{name: "duplicate", src: "a: 1\nb: 2\na: 3", allowed: []string{"a", "b"},
			wantKeys: []string{"a", "b"},
			wantErr:  `3:1: a: duplicate key "a" (first defined at line 1)`},
		{name: "non-scalar key", src: "? [x]\n: 1\na: 2", allowed: []string{"a"},
			wantKeys: []string{"a"},
			wantErr:  `1:3: keys must be plain strings, got a list`},
		{name: "merge key", src: "base: &b {a: 1}\n<<: *b", allowed: []string{"base", "a"},
			wantKeys: []string{"base"},
			wantErr:  `2:1: merge keys (<<) are not supported; write the keys out`},
		{name: "everything at once, in document order", src: "zz: 1\na: 1\na: 2\nyy: 3", allowed: []string{"a"},
			wantKeys: []string{"zz", "a", "yy"},
			wantErr: "1:1: zz: unknown key \"zz\"\n" +
				"3:1: a: duplicate key \"a\" (first defined at line 2)\n" +
				"4:1: yy: unknown key \"yy\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := yamlconf.NewDecoder(nil)
			m, ok := d.Map(parse(t, tt.src), "")
			if !ok {
				t.Fatalf("Map failed: %v", d.Err())
			}
			m.Reject(tt.allowed...)
			if diff := cmp.Diff(tt.wantErr, errText(d.Err())); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantKeys, m.Keys()); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
}

// RejectListing names every valid key, with or without a suggestion, so
// a key that was never valid still tells the reader what is.
func TestRejectListing(t *testing.T) {
	for src, want := range map[string]string{
		"denyy: [x]": `1:1: denyy: unknown key "denyy" (did you mean "deny"?); valid keys: allow, deny`,
		"block: [x]": `1:1: block: unknown key "block"; valid keys: allow, deny`,
		"allow: [x]": "",
	} {
		d := yamlconf.NewDecoder(nil)
		m, ok := d.Map(parse(t, src), "")
		if !ok {
			t.Fatalf("Map failed: %v", d.Err())
		}
		m.RejectListing("allow", "deny")
		if diff := cmp.Diff(want, errText(d.Err())); diff != "" {
			t.Errorf("%s: errors (-want +got):\n%s", src, diff)
		}
	}
}

func TestMapBasics(t *testing.T) {
	d := yamlconf.NewDecoder(nil)
	root := parse(t, "outer:\n  a: 1\n  b: ~\n  'c d': x\n  jitter: 2\n")
	if m, ok := d.Map(nil, "x"); ok || m != nil {
		t.Errorf("Map(nil) = %v, %v; want nil, false", m, ok)
	}
	top, ok := d.Map(root, "config")
	if !ok {
		t.Fatalf("Map: %v", d.Err())
	}
	m, ok := d.Map(top.Value("outer"), top.Path("outer"))
	if !ok {
		t.Fatalf("Map: %v", d.Err())
	}
	if m.Node() != top.Value("outer") {
		t.Error("Node() is not the mapping node")
	}
	for key, want := range map[string]bool{"a": true, "b": false, "zz": false} {
		if got := m.Has(key); got != want {
			t.Errorf("Has(%q) = %v, want %v", key, got, want)
		}
	}
	if got, want := m.Path("c d"), `config.outer["c d"]`; got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
	m.RejectFunc([]string{"a", "b", "c d"}, func(k string) string { return "reconnect." + k + " is not a reconnect option" })
	m.Errorf("missing", "is required")
	if d.Failed("config.outer.a") || !d.Failed("config.outer.jitter") {
		t.Errorf("Failed: a=%v jitter=%v; want false, true", d.Failed("config.outer.a"), d.Failed("config.outer.jitter"))
	}
	want := "2:3: config.outer.missing: is required\n" +
		"5:3: config.outer.jitter: reconnect.jitter is not a reconnect option"
	if diff := cmp.Diff(want, errText(d.Err())); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestMapOfNonMapping(t *testing.T) {
	for _, tt := range []struct{ src, want string }{
		{"x", "1:1: config: must be a mapping of keys to values, got a string"},
		{"[1]", "1:1: config: must be a mapping of keys to values, got a list"},
		{"~", ""},
	} {
		d := yamlconf.NewDecoder(nil)
		if m, ok := d.Map(parse(t, tt.src), "config"); ok || m != nil {
			t.Errorf("Map(%q) = %v, %v; want nil, false", tt.src, m, ok)
		}
		if diff := cmp.Diff(tt.want, errText(d.Err())); diff != "" {
			t.Errorf("Map(%q) errors (-want +got):\n%s", tt.src, diff)
		}
	}
}

func TestErrorRendering(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&yamlconf.Error{Line: 3, Column: 7, Path: "config.url", Msg: "is required"}, "3:7: config.url: is required"},
		{&yamlconf.Error{Line: 3, Path: "config.url", Msg: "is required"}, "3: config.url: is required"},
		{&yamlconf.Error{Path: "serverName", Msg: "is required"}, "serverName: is required"},
		{&yamlconf.Error{Msg: "bad"}, "bad"},
		{yamlconf.Errors{{Line: 1, Column: 1, Msg: "a"}, {Line: 2, Column: 1, Path: "p", Msg: "b"}}, "1:1: a\n2:1: p: b"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.err.Error()); diff != "" {
			t.Errorf("Error() (-want +got):\n%s", diff)
		}
	}
}

func TestAsErrors(t *testing.T) {
	one := &yamlconf.Error{Line: 1, Msg: "one"}
	two := &yamlconf.Error{Line: 2, Msg: "two"}
	tests := []struct {
		name string
		err  error
		want yamlconf.Errors
	}{
		{"errors", yamlconf.Errors{one, two}, yamlconf.Errors{one, two}},
		{"wrapped errors", fmt.Errorf("decoding: %w", yamlconf.Errors{one}), yamlconf.Errors{one}},
		{"single", fmt.Errorf("decoding: %w", two), yamlconf.Errors{two}},
		{"plain", errors.New("plain"), nil},
		{"nil", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, yamlconf.AsErrors(tt.err)); diff != "" {
				t.Errorf("AsErrors (-want +got):\n%s", diff)
			}
		})
	}
	var target *yamlconf.Error
	if !errors.As(yamlconf.Errors{one, two}, &target) || target != one {
		t.Errorf("errors.As through Errors.Unwrap found %v, want the first error", target)
	}
}

func TestScalarFloat(t *testing.T) {
	tests := []struct {
		src    string
		want   float64
		wantOK bool
	}{
		{"1", 1, true},
		{"1.5", 1.5, true},
		{"-.inf", math.Inf(-1), true},
		{"x", 0, false},
		{"[1]", 0, false},
		{"!!int foo", 0, false},
	}
	for _, tt := range tests {
		got, ok := yamlconf.ScalarFloat(parse(t, tt.src))
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("ScalarFloat(%q) = %v, %v; want %v, %v", tt.src, got, ok, tt.want, tt.wantOK)
		}
	}
	if _, ok := yamlconf.ScalarFloat(nil); ok {
		t.Error("ScalarFloat(nil) ok")
	}
	if _, err := yamlconf.ScalarInt(nil); err == nil || err.Error() != "must be an integer, got null" {
		t.Errorf("ScalarInt(nil) error = %v", err)
	}
}

func TestDescribe(t *testing.T) {
	tests := []struct{ src, want string }{
		{"~", "null"},
		{"{a: 1}", "a mapping"},
		{"[1]", "a list"},
		{"secret-looking", "a string"},
		{"12", "the integer 12"},
		{".nan", "the number .nan"},
		{"false", "the boolean false"},
		{"2025-01-02", "a date"},
		{"!custom x", "a value tagged !custom (custom tags are not supported)"},
	}
	for _, tt := range tests {
		if got := yamlconf.Describe(parse(t, tt.src)); got != tt.want {
			t.Errorf("Describe(%q) = %q, want %q", tt.src, got, tt.want)
		}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte("a: 1"), &doc); err != nil {
		t.Fatal(err)
	}
	if got := yamlconf.Describe(&doc); got != "a document" {
		t.Errorf("Describe(document) = %q", got)
	}
}

func TestJoinKey(t *testing.T) {
	tests := []struct{ path, key, want string }{
		{"", "id", "id"},
		{"config", "serverName", "config.serverName"},
		{"config.headers", "X-Api-Key", "config.headers.X-Api-Key"},
		{"config.env", "_X1", "config.env._X1"},
		{"config.env", "A.B", `config.env["A.B"]`},
		{"config.env", "1A", `config.env["1A"]`},
		{"config.env", "-A", `config.env["-A"]`},
		{"config.env", "", `config.env[""]`},
		{"", "a b", `["a b"]`},
	}
	for _, tt := range tests {
		if got := yamlconf.JoinKey(tt.path, tt.key); got != tt.want {
			t.Errorf("JoinKey(%q, %q) = %q, want %q", tt.path, tt.key, got, tt.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	keys := []string{"serverName", "transport", "toolCallTimeoutMs", "startupTimeoutMs", "url"}
	tests := []struct{ key, want string }{
		{"servername", "serverName"},
		{"transprot", "transport"},
		{"toolCallTimeout", "toolCallTimeoutMs"},
		{"urls", "url"},
		{"timeout", ""},
		{"", ""},
		{"startup", "startupTimeoutMs"}, // cut short: the one it begins
		{"tool", "toolCallTimeoutMs"},
		{"st", ""}, // too short to tell
	}
	for _, tt := range tests {
		if got := yamlconf.Suggest(tt.key, keys); got != tt.want {
			t.Errorf("Suggest(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
	// Two letters swapped is one edit: the gateway entry's "audti" is
	// "audit", not "auth" (two edits either way by Levenshtein's count).
	gateway := []string{"auth", "policy", "rateLimit", "audit"}
	for _, tt := range []struct{ key, want string }{{"audti", "audit"}, {"atuh", "auth"}, {"ploicy", "policy"}} {
		if got := yamlconf.Suggest(tt.key, gateway); got != tt.want {
			t.Errorf("Suggest(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
}

func TestLocate(t *testing.T) {
	root := parse(t, `config:
  env:
    PORT: "1"
    A.B: "2"
  args: [x, y]
`)
	pos := func(n *yaml.Node) string {
		if n == nil {
			return "nil"
		}
		return fmt.Sprintf("%d:%d", n.Line, n.Column)
	}
	tests := []struct{ path, want string }{
		{"", "1:1"},
		{"config", "2:3"},
		{"config.env.PORT", "3:11"},
		{`config.env["A.B"]`, "4:10"},
		{`config.env["PORT"]`, "3:11"},
		{"config.args[1]", "5:13"},
		{"config.args[9]", "5:9"},
		{"config.args.x", "5:9"},
		{"config.env[0]", "3:5"},
		{"config.missing", "2:3"},
		{"config.env[x", "3:5"},
		{`config.env["A.B"`, "3:5"},
		{"config.env[]", "3:5"},
		{".config", "2:3"},
	}
	for _, tt := range tests {
		if got := pos(yamlconf.Locate(root, tt.path)); got != tt.want {
			t.Errorf("Locate(%q) at %s, want %s", tt.path, got, tt.want)
		}
	}
	if got := yamlconf.Locate(nil, "a"); got != nil {
		t.Errorf("Locate(nil) = %v", got)
	}
}
