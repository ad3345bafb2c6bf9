package tokens

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/tool"
)

// The expected counts are o200k_base's, as OpenAI's reference tokenizer
// (js-tiktoken 1.x, getEncoding("o200k_base")) gives them.
func TestCount(t *testing.T) {
	for _, c := range []struct {
		s    string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"Hello, world!", 4},
		{"tiktoken is great!", 6},
		{"日本語のテキスト", 6},
		{"<|endoftext|>", 7}, // ordinary text, not the special token
		{`{"type":"function","function":{"name":"mcp__github__create_issue","description":"Create a new issue","parameters":{"type":"object"}}}`, 31},
	} {
		got, err := Count(c.s)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("Count(%q) = %d, want %d", c.s, got, c.want)
		}
	}
}

func TestToolCountsTheChatJSON(t *testing.T) {
	issue := tool.Tool{Name: "mcp__github__create_issue", Description: "Create a new issue"}
	for _, c := range []struct {
		name   string
		schema string
	}{
		{"no schema", ""},
		{"formatted schema", "{\n  \"type\": \"object\"\n}"},
		{"compact schema", `{"type":"object"}`},
	} {
		issue.InputSchema = json.RawMessage(c.schema)
		got, err := Tool(issue)
		if err != nil {
			t.Fatal(err)
		}
		if got != 31 { // the compact chat JSON of TestCount
			t.Errorf("%s: Tool = %d, want 31", c.name, got)
		}
	}
	// HTML characters stay as written, as a request body carries them.
	angle := tool.Tool{Name: "a", Description: "<b>&</b>", InputSchema: json.RawMessage(`{"type":"object"}`)}
	n, err := Tool(angle)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Count(`{"type":"function","function":{"name":"a","description":"<b>&</b>","parameters":{"type":"object"}}}`)
	if n != want {
		t.Errorf("Tool(angle) = %d, want %d", n, want)
	}
}

func TestTotal(t *testing.T) {
	a := tool.Tool{Name: "mcp__github__create_issue", Description: "Create a new issue"}
	sum, err := Total([]tool.Tool{a, a})
	if err != nil || sum != 62 {
		t.Errorf("Total = %d, %v; want 62", sum, err)
	}
	if _, err := Total([]tool.Tool{{Name: "bad", InputSchema: json.RawMessage(`{`)}}); err == nil {
		t.Error("Total of an invalid schema: no error")
	}
}

// A hostile server's definition cannot stall the count: a megabyte of one
// letter (one piece to the tokenizer, whose merges take time quadratic
// in a piece's length: minutes, under the view's lock) is counted in
// pieces of at most maxRun bytes, within a token a piece of the whole;
// prose and JSON, whose runs are short, are counted whole, as before.
func TestCountBoundsLongRuns(t *testing.T) {
	huge := strings.Repeat("a", 1<<20)
	for _, part := range cutRuns(huge) {
		if len(part) > maxRun {
			t.Fatalf("a piece of %d bytes, want at most %d", len(part), maxRun)
		}
	}
	n, err := Count(huge)
	if err != nil {
		t.Fatal(err)
	}
	if n < len(huge)/8 || n > len(huge)/8+len(huge)/maxRun {
		t.Errorf("a megabyte of one letter: %d tokens, want about %d (8 letters a token, one more at most a piece)", n, len(huge)/8)
	}
	prose := `{"type":"function","function":{"name":"mcp__github__search_issues","description":"Search issues and pull requests across GitHub repositories. Use qualifiers like repo:owner/name, is:open, label:bug.","parameters":{"type":"object","properties":{"query":{"type":"string"}}}}}`
	if parts := cutRuns(prose); len(parts) != 1 {
		t.Errorf("a tool definition cut in %d pieces, want it whole", len(parts))
	}
}
