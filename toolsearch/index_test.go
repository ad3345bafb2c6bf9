package toolsearch

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/tool"
)

func TestSplitWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"getFileContents", []string{"get", "file", "contents"}},
		{"list_directory", []string{"list", "directory"}},
		{"browser-navigate.back", []string{"browser", "navigate", "back"}},
		{"HTTPServer", []string{"http", "server"}},
		{"parseJSON", []string{"parse", "json"}},
		{"s3_putObject v2API", []string{"s3", "put", "object", "v2", "api"}},
		{"listPRs URLsOf IDs", []string{"list", "prs", "urls", "of", "ids"}},
		{"base64Encode", []string{"base64", "encode"}},
		{"Größe ÄnderungsDatum", []string{"größe", "änderungs", "datum"}},
		{"  Read the file.  ", []string{"read", "the", "file"}},
		{"", nil},
		{"--__..", nil},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, splitWords(nil, tc.in)); diff != "" {
			t.Errorf("splitWords(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestAnalyzer(t *testing.T) {
	tests := []struct {
		in      string
		phrases bool
		want    []string
	}{
		{"Please list all the directories", true, []string{"list", "directori"}},
		{"open a pull request", true, []string{"open", "pr"}},
		{"open a pull request", false, []string{"open", "pull", "request"}},
		{"Merge Requests and PRs", true, []string{"mr", "pr"}},
		{"file a bug", true, []string{"creat", "bug"}},
		{"which account am I logged in as", true, []string{"account", "login"}},
		{"take a screen shot", true, []string{"take", "screenshot"}},
		{"x y z", true, nil},
	}
	for _, tc := range tests {
		a := analyzer{phrases: tc.phrases, cache: map[string]wordInfo{}}
		if diff := cmp.Diff(tc.want, a.appendTerms(nil, tc.in)); diff != "" {
			t.Errorf("terms of %q (phrases %v) (-want +got):\n%s", tc.in, tc.phrases, diff)
		}
	}
}

func TestAliases(t *testing.T) {
	for _, tc := range []struct {
		term    string
		has     []string
		hasNot  []string
		comment string
	}{
		{term: "fetch", has: []string{"get", "read", "retriev"}},
		{term: "ticket", has: []string{"issu", "bug"}},
		{term: "pr", has: []string{"mr"}},
		{term: "open", has: []string{"creat", "get", "navig"}, comment: "one-way member of three groups"},
		{term: "creat", hasNot: []string{"open"}, comment: "to create is not to open"},
		{term: "show", has: []string{"list", "get"}},
	} {
		for _, w := range tc.has {
			if !contains(aliases[tc.term], w) {
				t.Errorf("aliases[%q] = %v, lacks %q (%s)", tc.term, aliases[tc.term], w, tc.comment)
			}
		}
		for _, w := range tc.hasNot {
			if contains(aliases[tc.term], w) {
				t.Errorf("aliases[%q] = %v, has %q (%s)", tc.term, aliases[tc.term], w, tc.comment)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestSplitName(t *testing.T) {
	tests := []struct {
		tool               tool.Tool
		wantServer, wantNm string
	}{
		{tool.Tool{Name: "mcp__github__create_issue"}, "github", "create_issue"},
		{tool.Tool{Name: "mcp__fx__admin_reset", Origin: tool.Origin{Server: "fx", Name: "admin.reset"}}, "fx", "admin.reset"},
		// A public name shortened by hashing: Origin has the real one.
		{tool.Tool{Name: "mcp__srv__a_very_long_na_0123abcd", Origin: tool.Origin{Server: "srv", Name: "a_very_long_name"}}, "srv", "a_very_long_name"},
		{tool.Tool{Name: "search_tools"}, "", "search_tools"},
		{tool.Tool{Name: "mcp__broken"}, "", "mcp__broken"},
	}
	for _, tc := range tests {
		s, n := splitName(tc.tool)
		if s != tc.wantServer || n != tc.wantNm {
			t.Errorf("splitName(%q) = %q, %q; want %q, %q", tc.tool.Name, s, n, tc.wantServer, tc.wantNm)
		}
	}
}

func TestParamWords(t *testing.T) {
	tests := []struct {
		name       string
		schema     string
		names      []string
		texts      []string
		wantNoText bool
	}{
		{name: "none", schema: ``},
		{name: "not an object", schema: `true`},
		{name: "flat, sorted", schema: `{"type":"object","description":"top level is skipped","properties":{
			"url":{"type":"string","description":"The URL to open"},
			"fullPage":{"type":"boolean","title":"Full page"}}}`,
			names: []string{"fullPage", "url"}, texts: []string{"Full page", "The URL to open"}},
		{name: "nested objects, arrays, enums, anyOf", schema: `{"properties":{
			"edits":{"type":"array","items":{"properties":{"oldText":{"description":"Text to search for"}}}},
			"mode":{"enum":["fast","slow",3]},
			"target":{"anyOf":[{"properties":{"selector":{}}},{"description":"or a point"}]},
			"tuple":{"items":[{"properties":{"first":{}}}]}}}`,
			names: []string{"edits", "oldText", "mode", "target", "selector", "tuple", "first"},
			texts: []string{"Text to search for", "fast", "slow", "or a point"}},
		{name: "members of unexpected types are skipped", schema: `{"properties":{
			"a":{"description":42,"title":"kept"},"b":"not a schema","c":{"properties":[1,2]}}}`,
			names: []string{"a", "b", "c"}, texts: []string{"kept"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := paramWords(json.RawMessage(tc.schema))
			if diff := cmp.Diff(tc.names, got.names); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.texts, got.texts); diff != "" {
				t.Errorf("texts (-want +got):\n%s", diff)
			}
		})
	}
}

// A schema is walked within bounds: depth, number of names, enum values.
func TestParamWordsBounds(t *testing.T) {
	deep := `{"description":"leaf"}`
	for i := range 20 {
		deep = fmt.Sprintf(`{"properties":{"p%d":%s}}`, i, deep)
	}
	if got := paramWords(json.RawMessage(deep)); len(got.names) != maxSchemaDepth || len(got.texts) != 0 {
		t.Errorf("deep schema: %d names %v, texts %v; want %d names and no text", len(got.names), got.names, got.texts, maxSchemaDepth)
	}
	props := map[string]any{}
	for i := range 3 * maxParams {
		props[fmt.Sprintf("p%03d", i)] = map[string]any{"enum": make([]string, 3*maxEnumValues)}
	}
	wide, _ := json.Marshal(map[string]any{"properties": props})
	got := paramWords(wide)
	if len(got.names) != maxParams || got.names[0] != "p000" || got.names[maxParams-1] != fmt.Sprintf("p%03d", maxParams-1) {
		t.Errorf("wide schema: %d names, first %q; want the first %d in order", len(got.names), got.names[0], maxParams)
	}
	if len(got.texts) != maxParams*maxEnumValues {
		t.Errorf("wide schema: %d enum texts, want %d", len(got.texts), maxParams*maxEnumValues)
	}
}

func tools(defs ...[3]string) []tool.Tool {
	out := make([]tool.Tool, len(defs))
	for i, d := range defs {
		out[i] = mk(d[0], d[1], d[2])
	}
	return out
}

func TestSearchLimitsAndOrder(t *testing.T) {
	idx := New(tools(
		[3]string{"a", "read_file", "Read a file."},
		[3]string{"b", "read_file", "Read a file."},
		[3]string{"a", "write_file", "Write a file."},
		[3]string{"a", "weather", "Current weather for a city."},
	))
	if idx.Len() != 4 {
		t.Errorf("Len() = %d", idx.Len())
	}
	all := idx.Search("read the file", 0)
	if diff := cmp.Diff([]string{"mcp__a__read_file", "mcp__b__read_file", "mcp__a__write_file"}, names(all)); diff != "" {
		t.Errorf("Search(k=0) (-want +got):\n%s", diff)
	}
	if all[0].Score != all[1].Score || all[1].Score <= all[2].Score || all[2].Score <= 0 {
		t.Errorf("scores %v: want a tie broken by name, then a lower positive score", all)
	}
	if all[0].Description != "Read a file." {
		t.Errorf("Description = %q", all[0].Description)
	}
	if got := names(idx.Search("read the file", 1)); !cmp.Equal(got, []string{"mcp__a__read_file"}) {
		t.Errorf("Search(k=1) = %v", got)
	}
	if got := idx.Search("read the file", 100); len(got) != 3 {
		t.Errorf("Search(k=100) = %d matches, want 3", len(got))
	}
	for _, q := range []string{"", "   ", "the of and a", "zzzz qqqq"} {
		if got := idx.Search(q, 5); len(got) != 0 {
			t.Errorf("Search(%q) = %v, want nothing", q, got)
		}
	}
	if got := New(nil).Search("read", 5); len(got) != 0 {
		t.Errorf("empty index: %v", got)
	}
}

// The additions of New over the baseline: aliases and completions match
// words that no tool uses; the baseline matches only shared terms.
func TestSearchExpansion(t *testing.T) {
	ts := tools(
		[3]string{"gh", "create_issue", "Create a new issue."},
		[3]string{"gh", "get_authenticated_user", "The signed-in user."},
		[3]string{"pw", "browser_navigate", "Navigate to a URL."},
	)
	ranker, baseline := New(ts), NewBaseline(ts)
	for _, tc := range []struct{ query, want string }{
		{"open a ticket", "mcp__gh__create_issue"},
		{"auth", "mcp__gh__get_authenticated_user"}, // a completion
		{"go to example.com", "mcp__pw__browser_navigate"},
	} {
		if got := ranker.Search(tc.query, 1); len(got) != 1 || got[0].Name != tc.want {
			t.Errorf("New: Search(%q) = %v, want %s", tc.query, names(got), tc.want)
		}
		if got := baseline.Search(tc.query, 1); len(got) != 0 {
			t.Errorf("NewBaseline: Search(%q) = %v, want nothing", tc.query, names(got))
		}
	}
}

// An index answers concurrent queries (run with -race), and a query's
// scratch space is clean for the next one.
func TestSearchConcurrent(t *testing.T) {
	idx := New(catalog())
	want := make([][]Match, len(requests))
	for i, r := range requests {
		want[i] = idx.Search(r.query, 5)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range requests {
				i := (i + g*7) % len(requests)
				if got := idx.Search(requests[i].query, 5); !cmp.Equal(got, want[i]) {
					t.Errorf("concurrent Search(%q) = %v, want %v", requests[i].query, got, want[i])
				}
			}
		})
	}
	wg.Wait()
}

// Only the first maxDescription bytes of a description are indexed.
func TestSearchLongDescription(t *testing.T) {
	long := mk("s", "long", "Opens the vault. "+strings.Repeat("filler ", maxDescription/7+1)+"zebra")
	idx := New([]tool.Tool{long})
	if got := idx.Search("vault", 1); len(got) != 1 || got[0].Description != long.Description {
		t.Errorf("Search(vault) = %v", got)
	}
	if got := idx.Search("zebra", 1); len(got) != 0 {
		t.Errorf("Search(zebra) = %v, want nothing past the bound", names(got))
	}
}
