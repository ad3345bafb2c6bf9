package confedit

import (
	"strings"
	"testing"
)

// What is not a list of entries is refused where it is; an empty file,
// or one of comments alone, is a new list that an entry is added to
// after the comments; a flow list becomes a block list.
func TestParseAndAppendEdges(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"mapping", "a: 1\n", "f.yaml:1:1: the config must be a YAML list of entries"},
		{"syntax", "- [\n", "f.yaml: yaml: line"},
	} {
		if _, _, err := Parse("f.yaml", []byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	entry := Mapping("id", "x", "name", "mcp-client")
	for _, c := range []struct{ name, in, want string }{
		{"empty", "", "- id: x\n  name: mcp-client\n"},
		{"comments", "# header\n\n", "# header\n\n- id: x\n  name: mcp-client\n"},
		{"flow", "[]\n", "- id: x\n  name: mcp-client\n"},
		{"flow with one", "[{id: a, name: b}]\n", "- {id: a, name: b}\n- id: x\n  name: mcp-client\n"},
		// a document of no entries, as a removal of the last one can leave
		// it, is a list as the host reads it (Parse used to refuse it)
		{"document marker", "---\n", "- id: x\n  name: mcp-client\n"},
		{"null", "~\n", "- id: x\n  name: mcp-client\n"},
	} {
		doc, list, err := Parse("f.yaml", []byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		out, err := Append([]byte(c.in), doc, list, entry)
		if err != nil || string(out) != c.want {
			t.Errorf("%s: %q %v, want %q", c.name, out, err, c.want)
		}
	}
}

// Find and Names know an entry by id or by config.serverName.
func TestFindAndNames(t *testing.T) {
	_, list, err := Parse("f.yaml", []byte("- {id: a, name: mcp-client, config: {serverName: srv}}\n- {id: b}\n- just text\n"))
	if err != nil {
		t.Fatal(err)
	}
	if Find(list, "a") != 0 || Find(list, "srv") != 0 || Find(list, "b") != 1 || Find(list, "c") != -1 {
		t.Errorf("Find: %d %d %d %d", Find(list, "a"), Find(list, "srv"), Find(list, "b"), Find(list, "c"))
	}
	if got := strings.Join(Names(list), ","); got != "a,srv,b" {
		t.Errorf("Names: %s", got)
	}
}

// A comment at the end of an entry, deeper than its dash, is the entry's:
// Replace writes it once (the encoder keeps it with the entry's last
// key), however many times the entry is replaced, and Remove takes it
// with the entry; a comment at the dash's depth is the next entry's (or
// the file's) and stays where it is. Replace used to keep the deeper
// comment in the text around the entry as well, doubling it at each
// replacement (each "always" answer of the agent), and Remove to leave it
// under the entry before.
func TestEntryEndComments(t *testing.T) {
	const file = "- id: permissions\n  name: permissions\n  config:\n    allow: [a]\n    # deny: [b]\n\n# the tool search\n- id: t\n  name: tool-search\n"
	data := []byte(file)
	for range 3 {
		doc, list, err := Parse("f.yaml", data)
		if err != nil {
			t.Fatal(err)
		}
		allow := Value(Value(list.Content[0], "config"), "allow")
		allow.Content = append(allow.Content, Scalar("c"))
		if data, err = Replace(data, doc, list, 0); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(string(data), "# deny: [b]"); n != 1 || strings.Count(string(data), "# the tool search") != 1 || !strings.Contains(string(data), "allow: [a, c, c, c]") {
		t.Errorf("after three replacements (the comment %d times):\n%s", n, data)
	}
	doc, list, err := Parse("f.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Remove([]byte(file), doc, list, 0)
	if want := "\n# the tool search\n- id: t\n  name: tool-search\n"; err != nil || string(out) != want {
		t.Errorf("removed:\n%s\nwant:\n%s", out, want)
	}
}
