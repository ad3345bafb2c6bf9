package toolsearch

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/tool"
)

func TestReplaceLiterals(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"load https://go.dev in chrome", "load url in chrome"},
		{"open (www.example.org) now", "open url now"},
		{"playwright: open news.ycombinator.com", "playwright: open url"},
		{"scrape example.com/pricing", "scrape url"},
		{"save this to notes.txt", "save this to file notes"},
		{"validate my .circleci/config.yml", "validate my file .circleci/config"},
		{"show '~/pics/cat.png'", "show file ~/pics/cat"},
		{"read /etc/hosts", "read file /etc/hosts"},
		{"usages of os.Exit and 48.85, version 1.2", "usages of os.Exit and 48.85, version 1.2"},
		{"a .txt", "a .txt"},
		{"no literals here", "no literals here"},
	} {
		if got := replaceLiterals(tc.in); got != tc.want {
			t.Errorf("replaceLiterals(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCamelModes(t *testing.T) {
	for _, tc := range []struct {
		mode camelMode
		want []string
	}{
		{camelSplit, []string{"git", "hub", "get", "file", "content", "list", "file", "ünter", "größe"}},
		{camelBoth, []string{"git", "hub", "github", "get", "file", "content", "getfilecont", "list", "file", "ünter", "größe", stem("üntergröße")}},
		{camelWhole, []string{"github", "getfilecont", "list", "file", stem("üntergröße")}},
	} {
		a := analyzer{camel: tc.mode}
		got := a.appendTerms(nil, "GitHub getFileContents list_files ünterGröße")
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("mode %d (-want +got):\n%s", tc.mode, diff)
		}
	}
	a := analyzer{camel: camelWhole}
	if got := a.appendTerms(nil, "plain words only"); !cmp.Equal(got, []string{"plain", "word"}) {
		t.Errorf("plain words: %q", got)
	}
}

// A request that names a server puts that server's tools first; a word in
// the names of most servers names none.
func TestNamedServer(t *testing.T) {
	tools := []tool.Tool{
		mk("alpha-mcp", "create_issue", "Create a new issue in a project."),
		mk("beta-mcp", "create_issue", "Create a new issue in a project, with labels and a long description of the issue."),
		mk("gamma-mcp", "list_files", "List files."),
	}
	idx := New(tools)
	if got := idx.Search("create an issue in beta", 1); len(got) != 1 || got[0].Name != "mcp__beta-mcp__create_issue" {
		t.Errorf("named beta: got %v", names(got))
	}
	if got := idx.named(idx.concepts("create an issue with mcp")); got != nil {
		t.Errorf("mcp names servers %v, want none", got)
	}
	if got := NewBaseline(tools).named(idx.concepts("beta")); got != nil {
		t.Errorf("the baseline boosted servers %v", got)
	}
	// A name's beginning names it, from four letters on; so does an alias.
	idx = New([]tool.Tool{mk("mongodb", "find", "Find documents."), mk("github", "find", "Find code."),
		mk("gitlab", "find", "Find code."), mk("kubernetes", "get", "Get pods.")})
	for _, tc := range []struct {
		query string
		want  []int32
	}{{"find in mongo", []int32{0}}, {"find in git", nil}, {"get k8s pods", []int32{3}}, {"find code on github", []int32{1}}} {
		if got := idx.named(idx.concepts(tc.query)); !cmp.Equal(got, tc.want) {
			t.Errorf("%q names %v, want %v", tc.query, got, tc.want)
		}
	}
	// A word common in the other servers' tools names nothing, even where
	// it is (the beginning of) a word of a server's name.
	idx = New([]tool.Tool{mk("brave-search", "web", "Search the web."), mk("github", "code", "Search code."),
		mk("gitlab", "projects", "Search projects."), mk("filesystem", "read", "Read a file."), mk("github", "push", "Push a file.")})
	for _, q := range []string{"search code", "read the file"} {
		if got := idx.named(idx.concepts(q)); got != nil {
			t.Errorf("%q names %v, want none", q, got)
		}
	}
}

// NewRawBaseline takes words as written: no stems, stop words or camel
// case splits.
func TestRawBaseline(t *testing.T) {
	tools := []tool.Tool{mk("github", "createRepository", "Create a repository.")}
	for _, tc := range []struct {
		query      string
		raw, plain int
	}{{"repositories", 0, 1}, {"repository", 1, 1}, {"a", 1, 0}, {"createrepository", 1, 0}, {"Create", 1, 1}} {
		if got := len(NewRawBaseline(tools).Search(tc.query, 0)); got != tc.raw {
			t.Errorf("raw baseline, %q: %d matches, want %d", tc.query, got, tc.raw)
		}
		if got := len(NewBaseline(tools).Search(tc.query, 0)); got != tc.plain {
			t.Errorf("baseline, %q: %d matches, want %d", tc.query, got, tc.plain)
		}
	}
}
