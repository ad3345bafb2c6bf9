package retrieval

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/toolsearch"
)

func tiny() *Catalog {
	return &Catalog{Servers: []Server{
		{Name: "github", Tools: []Tool{
			{Name: "create_issue", Description: "Create a new issue in a GitHub repository", InputSchema: json.RawMessage(`{"type": "object",
				"properties": {"title": {"type": "string"}}}`)},
			{Name: "list_issues", Description: "List issues in a GitHub repository", InputSchema: json.RawMessage(`{}`)},
		}},
		{Name: "fs", Tools: []Tool{{Name: "read_file", Description: "Read a file", InputSchema: json.RawMessage(`{}`)}}},
	}}
}

// writeFile writes content to a new file and returns its path.
func writeFile(t *testing.T, content string) (path string) {
	path = filepath.Join(t.TempDir(), "q.tsv")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatalf("writing the test file: %v", err)
	}
	return path
}

func TestLoadQueries(t *testing.T) {
	path := writeFile(t, "# comment\n\ntune\topen a bug\tgithub:create_issue\nheld\tshow notes.txt\tfs:read_file,github:list_issues\n")
	qs, err := LoadQueries(path, tiny())
	if err != nil {
		t.Fatal(err)
	}
	want := []Query{
		{Split: Tune, Text: "open a bug", Want: []string{"mcp__github__create_issue"}},
		{Split: Held, Text: "show notes.txt", Want: []string{"mcp__fs__read_file", "mcp__github__list_issues"}},
	}
	if diff := cmp.Diff(want, qs); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[1:], Of(qs, Held)); diff != "" {
		t.Errorf("Of(held) (-want +got):\n%s", diff)
	}
}

func TestLoadQueriesErrors(t *testing.T) {
	for _, tc := range []struct{ content, want string }{
		{"tune\tno answers\n", ":1: 2 tab-separated fields, want 3"},
		{"# c\ntrain\tq\tfs:read_file\n", `:2: split "train", want "tune" or "held"`},
		{"tune\t \tfs:read_file\n", ":1: empty query"},
		{"held\tq\tfs:write_file\n", `:1: answer "fs:write_file" is not server:tool of a catalog tool`},
		{"held\tq\tread_file\n", `:1: answer "read_file" is not server:tool`},
	} {
		path := writeFile(t, tc.content)
		_, err := LoadQueries(path, tiny())
		if err == nil || !strings.Contains(err.Error(), path+tc.want) {
			t.Errorf("LoadQueries(%q): %v, want %q", tc.content, err, path+tc.want)
		}
	}
	if _, err := LoadQueries(filepath.Join(t.TempDir(), "none.tsv"), tiny()); err == nil {
		t.Error("a missing file loaded")
	}
}

func TestLoadCatalogErrors(t *testing.T) {
	for _, content := range []string{"{", `{"servers":[]}`} {
		path := writeFile(t, content)
		if _, err := LoadCatalog(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("LoadCatalog(%q): %v, want an error naming the file", content, err)
		}
	}
	if _, err := LoadCatalog(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("a missing file loaded")
	}
}

// Tools are registered the bridge's way, schemas compact as served;
// replicas rename the servers.
func TestReplicas(t *testing.T) {
	c := tiny()
	tools := c.Replicas(2)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	want := []string{"mcp__github__create_issue", "mcp__github__list_issues", "mcp__fs__read_file",
		"mcp__github-1__create_issue", "mcp__github-1__list_issues", "mcp__fs-1__read_file"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if got := string(tools[3].InputSchema); got != `{"type":"object","properties":{"title":{"type":"string"}}}` {
		t.Errorf("schema %s, want it compact", got)
	}
	if tools[3].Origin.Server != "github-1" || tools[3].Origin.Name != "create_issue" || tools[3].Execute == nil {
		t.Errorf("replica %+v", tools[3])
	}
	if out, err := tools[0].Execute(t.Context(), nil); err != nil || out.Content != nil {
		t.Errorf("body: %v %v", out, err)
	}
	if len(c.Tools()) != c.Len() || c.Len() != 3 {
		t.Errorf("Tools %d, Len %d, want 3", len(c.Tools()), c.Len())
	}
}

func TestEvaluate(t *testing.T) {
	idx := toolsearch.NewBaseline(tiny().Tools())
	qs := []Query{
		{Text: "create issue", Want: []string{"mcp__github__create_issue"}}, // rank 1
		{Text: "issues", Want: []string{"mcp__github__create_issue"}},       // rank 2: list_issues is shorter
		{Text: "read file", Want: []string{"mcp__github__list_issues"}},     // not found
		{Text: "zzz", Want: []string{"mcp__fs__read_file"}},                 // nothing matches
	}
	got := Evaluate(idx, qs)
	want := Scores{Queries: 4, Recall1: 0.25, Recall5: 0.5, MRR10: (1 + 0.5) / 4}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := Evaluate(idx, nil); got != (Scores{}) {
		t.Errorf("no queries: %+v", got)
	}
}
