package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/tool"
)

// searchMatch is one element of `search --json`.
type searchMatch struct {
	Name        string  `json:"name"`
	Score       float64 `json:"score"`
	Description string  `json:"description"`
}

func decodeMatches(t *testing.T, s string) []searchMatch {
	t.Helper()
	var ms []searchMatch
	if err := json.Unmarshal([]byte(s), &ms); err != nil {
		t.Fatalf("not a JSON array of matches: %v\n%s", err, s)
	}
	return ms
}

// searchRow is a line of the human table: name, score, description.
var searchRow = regexp.MustCompile(`^(mcp__\S+) +(\d+\.\d\d) +(\S.*)$`)

// Requests in users' words find the embedded demo server's tools.
func TestSearchOnEmbeddedDefault(t *testing.T) {
	t.Chdir(t.TempDir()) // no ./mcpbridge.yaml
	for _, tc := range []struct {
		query []string
		want  string
	}{
		{[]string{"what's the weather like in Paris?"}, "mcp__demo__weather"},
		{[]string{"sum", "of", "two", "numbers"}, "mcp__demo__add"}, // words need no quotes
		{[]string{"repeat my message back to me"}, "mcp__demo__echo"},
	} {
		want := tc.want
		r := mcpbridge(t, "", append([]string{"search"}, tc.query...)...)
		if r.code != ExitOK {
			t.Fatalf("search %q: exit %d\nstderr: %s", tc.query, r.code, r.stderr)
		}
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		m := searchRow.FindStringSubmatch(lines[0])
		if m == nil || m[1] != want {
			t.Errorf("search %q: first line %q, want %s with a score and its description", tc.query, lines[0], want)
		}
		for _, l := range lines {
			if !searchRow.MatchString(l) {
				t.Errorf("search %q: line %q is not name, score, description", tc.query, l)
			}
		}
	}
}

func TestSearchJSON(t *testing.T) {
	inDir(t, demoEntry) // a config: no notice of the embedded default on stderr
	r := mcpbridge(t, "", "search", "--json", "--limit", "2", "weather in Paris")
	if r.code != ExitOK || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	ms := decodeMatches(t, r.stdout)
	if len(ms) == 0 || len(ms) > 2 {
		t.Fatalf("%d matches, want 1 or 2: %s", len(ms), r.stdout)
	}
	if m := ms[0]; m.Name != "mcp__demo__weather" || m.Score <= 0 || !strings.HasPrefix(m.Description, "Returns made-up but deterministic current weather") {
		t.Errorf("first match %+v", m)
	}
	for i := 1; i < len(ms); i++ {
		if ms[i].Score > ms[i-1].Score {
			t.Errorf("not best first: %+v", ms)
		}
	}

	// Nothing matches: an empty array, not null, and still success.
	r = mcpbridge(t, "", "search", "--json", "the of and")
	if r.code != ExitOK || strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("no match: exit %d, stdout %q", r.code, r.stdout)
	}
	r = mcpbridge(t, "", "search", "zzzz")
	if r.code != ExitOK || r.stdout != "" || r.stderr != "no tool matches\n" {
		t.Errorf("no match (human): %+v", r)
	}
}

// With "-" the servers start once and each line of stdin gets one line of
// answer, in step: an empty query gets an empty answer.
func TestSearchStdin(t *testing.T) {
	t.Chdir(t.TempDir())
	stdin := "weather in Paris\n\nadd 2 and 3\r\nsay it back: echo\n"
	r := mcpbridge(t, stdin, "search", "--limit", "1", "-")
	if r.code != ExitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if diff := cmp.Diff("mcp__demo__weather\n\nmcp__demo__add\nmcp__demo__echo\n", r.stdout); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}

	r = mcpbridge(t, stdin, "search", "-", "--json", "--limit=3")
	if r.code != ExitOK || r.stderr != "" {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 4:\n%s", len(lines), r.stdout)
	}
	for i, want := range []string{"mcp__demo__weather", "", "mcp__demo__add", "mcp__demo__echo"} {
		ms := decodeMatches(t, lines[i])
		switch {
		case want == "" && len(ms) != 0:
			t.Errorf("line %d: %s, want []", i+1, lines[i])
		case want != "" && (len(ms) == 0 || len(ms) > 3 || ms[0].Name != want):
			t.Errorf("line %d: %s, want %s first of at most 3", i+1, lines[i], want)
		}
	}

	// No input, no output.
	if r := mcpbridge(t, "", "search", "-"); r.code != ExitOK || r.stdout != "" {
		t.Errorf("empty stdin: %+v", r)
	}
}

func TestSearchUsageErrors(t *testing.T) {
	t.Chdir(t.TempDir())
	tests := []struct {
		args      []string
		stderrHas string
	}{
		{[]string{"search"}, "want QUERY"},
		{[]string{"search", "--json"}, "want QUERY"},
		{[]string{"search", "--limit", "0", "weather"}, `--limit must be a whole number of at least 1, got "0"`},
		{[]string{"search", "--limit=-3", "weather"}, `got "-3"`},
		{[]string{"search", "weather", "--limit", "five"}, `got "five"`},
		{[]string{"search", "weather", "--limit"}, "--limit needs a value"},
		{[]string{"search", "--timings", "weather"}, "unknown flag --timings"},
		{[]string{"search", "--stdio", "weather"}, "unknown flag --stdio"},
		{[]string{"tools", "--limit", "3"}, "unknown flag --limit"},
		{[]string{"search", "--url", "http://127.0.0.1:1/mcp", "--config", "x.yaml", "weather"}, "cannot be used together"},
		{[]string{"search", "--config", "missing.yaml", "weather"}, "does not exist"},
		{[]string{"search", "-"}, "longer than"},
	}
	for _, tc := range tests {
		stdin := ""
		if tc.stderrHas == "longer than" {
			stdin = strings.Repeat("x", maxQueryBytes+1) + "\n"
		}
		r := mcpbridge(t, stdin, tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.stderrHas) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.stderrHas)
		}
	}
	if r := mcpbridge(t, "", "search", "--help"); r.code != ExitOK || !strings.Contains(r.stdout, "mcpbridge search [SOURCE]") {
		t.Errorf("--help: %+v", r)
	}
}

// Against the fixture servers (stdio children, every raw name on each):
// the server a request names decides between look-alike tools, a dotted
// raw name is searched by its words (its public name is hashed:
// mcp__alpha__admin_reset_<hash>), and equal scores come by name.
func TestSearchFixtureServers(t *testing.T) {
	cfg := writeConfig(t, fixtureEntries(t, "alpha", "beta"))
	for _, tc := range []struct {
		query string
		want  []string // prefixes of the first names, in order
	}{
		{"greet a person", []string{"mcp__alpha__greet", "mcp__beta__greet"}},
		{"greet someone on beta", []string{"mcp__beta__greet", "mcp__alpha__greet"}},
		{"reset the admin state", []string{"mcp__alpha__admin_reset", "mcp__beta__admin_reset"}},
		{"an image please", []string{"mcp__alpha__image", "mcp__beta__image"}},
	} {
		r := mcpbridge(t, "", "search", "--config", cfg, "--json", "--limit", "2", tc.query)
		if r.code != ExitOK {
			t.Fatalf("%q: exit %d: %s", tc.query, r.code, r.stderr)
		}
		ms := decodeMatches(t, r.stdout)
		ok := len(ms) == len(tc.want)
		for i := 0; ok && i < len(ms); i++ {
			ok = strings.HasPrefix(ms[i].Name, tc.want[i])
		}
		if !ok {
			t.Errorf("%q: got %+v, want names starting %q", tc.query, ms, tc.want)
		}
	}
}

// A server over Streamable HTTP (--url), and a server that fails to start:
// it is reported, the others' tools are still searched, and the exit
// status says something failed.
func TestSearchURLAndBrokenServer(t *testing.T) {
	hs := mcptest.NewHTTPServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}), mcptest.HTTPOptions{})
	r := mcpbridge(t, "", "search", "--url", hs.URL, "--name", "web", "--limit", "1", "greet")
	if r.code != ExitOK || !strings.HasPrefix(r.stdout, "mcp__web__greet ") {
		t.Errorf("--url: %+v", r)
	}

	cfg := writeConfig(t, fixtureEntries(t, "fx")+`- id: broken
  name: mcp-client
  config:
    serverName: broken
    transport: stdio
    command: no-such-mcp-server-xyz
`)
	r = mcpbridge(t, "", "search", "--config", cfg, "--limit", "1", "greet")
	if r.code != ExitFailed {
		t.Errorf("exit %d, want 1", r.code)
	}
	if !strings.HasPrefix(r.stdout, "mcp__fx__greet ") {
		t.Errorf("stdout: %q", r.stdout)
	}
	if !strings.Contains(r.stderr, `server "broken" failed:`) {
		t.Errorf("stderr: %s", r.stderr)
	}
}

func TestSearchLimitFlag(t *testing.T) {
	tests := []struct {
		argv  []string
		limit int
		rest  []string
	}{
		{nil, defaultSearchLimit, []string{}},
		{[]string{"a", "b"}, defaultSearchLimit, []string{"a", "b"}},
		{[]string{"--limit", "3", "q"}, 3, []string{"q"}},
		{[]string{"q", "-limit=7", "--json"}, 7, []string{"q", "--json"}},
		{[]string{"--limit", "2", "--limit", "9", "q"}, 9, []string{"q"}},
		{[]string{"q", "--", "--limit", "x"}, defaultSearchLimit, []string{"q", "--", "--limit", "x"}},
		{[]string{"limit", "-"}, defaultSearchLimit, []string{"limit", "-"}},
	}
	for _, tc := range tests {
		limit, rest, err := cutLimit(tc.argv)
		if err != nil || limit != tc.limit || !cmp.Equal(rest, tc.rest) {
			t.Errorf("cutLimit(%q) = %d, %q, %v; want %d, %q", tc.argv, limit, rest, err, tc.limit, tc.rest)
		}
	}
}

// `search -` answers each line before it reads the next, and a registry
// that changed in between (a server's tools/list_changed) is searched anew.
func TestSearchLinesFollowsRegistry(t *testing.T) {
	noop := func(context.Context, json.RawMessage) (tool.Output, error) { return tool.Output{}, nil }
	reg := tool.NewRegistry()
	if _, err := reg.Register(tool.Tool{Name: "mcp__w__weather", Description: "Current weather for a city.", Execute: noop}); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	e := &env{IO: IO{Stdin: inR, Stdout: outW}}
	done := make(chan error, 1)
	go func() {
		done <- e.searchLines(context.Background(), reg, 5, false)
		outW.Close()
	}()
	out := bufio.NewReader(outR)
	ask := func(q string) string {
		t.Helper()
		if _, err := io.WriteString(inW, q+"\n"); err != nil {
			t.Fatal(err)
		}
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return line
	}
	if got := ask("file a ticket"); got != "\n" {
		t.Errorf("before: %q, want no match", got)
	}
	if _, err := reg.Register(tool.Tool{Name: "mcp__gh__create_issue", Description: "Create a new issue.", Execute: noop}); err != nil {
		t.Fatal(err)
	}
	if got := ask("file a ticket"); got != "mcp__gh__create_issue\n" {
		t.Errorf("after the registry changed: %q", got)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Errorf("searchLines: %v", err)
	}
}

// An interrupt ends `search -` while it waits for a line.
func TestSearchLinesInterrupted(t *testing.T) {
	inR, inW := io.Pipe()
	defer inW.Close() // ends the reading goroutine
	e := &env{IO: IO{Stdin: inR, Stdout: io.Discard}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.searchLines(ctx, tool.NewRegistry(), 5, true) }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("searchLines = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("searchLines still waits for stdin after the interrupt")
	}
}
