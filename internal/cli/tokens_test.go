package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/chattools"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/report"
	"github.com/mcpbridge/mcpbridge/tokens"
)

// runJSON runs mcpbridge with args on the embedded default and decodes
// its stdout into v.
func runJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	r := mcpbridge(t, "", args...)
	if r.code != ExitOK {
		t.Fatalf("%v: exit %d\n%s", args, r.code, r.stderr)
	}
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, r.stdout)
	}
}

// tools --tokens counts each definition exactly as tools --json prints
// it (compacted), sums them by server, and status reports the same sums.
func TestToolsTokens(t *testing.T) {
	t.Chdir(t.TempDir())
	var chat []json.RawMessage
	runJSON(t, &chat, "tools", "--json")
	var got report.Tokens
	runJSON(t, &got, "tools", "--tokens", "--json")
	if got.Encoding != "o200k_base" || len(got.Tools) != len(chat) || len(chat) != 3 {
		t.Fatalf("tools --tokens --json: %+v for %d tools", got, len(chat))
	}
	sum := 0
	for i, raw := range chat {
		var c bytes.Buffer
		if err := json.Compact(&c, raw); err != nil {
			t.Fatal(err)
		}
		want, err := tokens.Count(c.String())
		if err != nil {
			t.Fatal(err)
		}
		if got.Tools[i].Tokens != want || got.Tools[i].Server != "demo" || !strings.Contains(c.String(), `"name":"`+got.Tools[i].Name+`"`) {
			t.Errorf("tool %d: %+v, want %d tokens of %s", i, got.Tools[i], want, c.String())
		}
		sum += want
	}
	if got.Total != sum || len(got.Servers) != 1 || got.Servers[0] != (report.ServerTokens{Server: "demo", Tools: 3, Tokens: sum}) {
		t.Errorf("totals: %d, %+v; want %d on demo", got.Total, got.Servers, sum)
	}

	var st report.Status
	runJSON(t, &st, "status", "--json")
	if len(st.Servers) != 1 || st.Servers[0].Tokens != sum {
		t.Errorf("status --json servers: %+v, want tokens %d", st.Servers, sum)
	}

	r := mcpbridge(t, "", "tools", "--tokens")
	table := regexp.MustCompile(`^TOOL +TOKENS\n(mcp__demo__\w+ +\d+\n){3}\nSERVER +TOKENS +TOOLS\ndemo +(\d+) +3\ntotal \(o200k_base\) +(\d+) +3\n$`)
	m := table.FindStringSubmatch(r.stdout)
	if r.code != ExitOK || m == nil || m[2] != m[3] || m[3] != strconv.Itoa(sum) {
		t.Errorf("tools --tokens: exit %d\n%s", r.code, r.stdout)
	}
	r = mcpbridge(t, "", "status")
	if !regexp.MustCompile(`(?m)^ID .* TOOLS +TOKENS +CONNECT .*\n\S+ +demo +ready .* 3 +` + strconv.Itoa(sum) + ` `).MatchString(r.stdout) {
		t.Errorf("status table without the tokens column:\n%s", r.stdout)
	}
	if r := mcpbridge(t, "", "status", "--tokens"); r.code != ExitUsage {
		t.Errorf("status --tokens: exit %d, want usage", r.code)
	}
}

// searchConfig runs the demo server behind a tool-search entry.
const searchConfig = `- id: demo
  name: mcp-client
  config:
    serverName: demo
    transport: stdio
    command: ${MCPBRIDGE_EXE}
    args: [demo-server]
- id: search
  name: tool-search
  config: {mode: MODE, pinned: [mcp__demo__echo]}
`

// With a tool-search entry on, tools lists what the model sees: the
// pinned tools and search_tools, and its summary says what that saves;
// with it off, the whole catalog.
func TestToolsShowsTheView(t *testing.T) {
	for _, c := range []struct {
		mode string
		want []string
		note bool
	}{
		{"on", []string{"mcp__demo__echo", "search_tools"}, true},
		{"off", []string{"mcp__demo__add", "mcp__demo__echo", "mcp__demo__weather"}, false},
		{"auto", []string{"mcp__demo__add", "mcp__demo__echo", "mcp__demo__weather"}, false}, // below 12,800 tokens
	} {
		inDir(t, strings.Replace(searchConfig, "MODE", c.mode, 1))
		var chat []chattools.Tool
		runJSON(t, &chat, "tools", "--json")
		var got []string
		for _, ct := range chat {
			got = append(got, ct.Function.Name)
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("mode %s: tools %v, want %v", c.mode, got, c.want)
		}
		r := mcpbridge(t, "", "tools")
		note := regexp.MustCompile(`tool search on: the model sees \d+ tokens of the catalog's 249 \(o200k_base\)`)
		if r.code != ExitOK || note.MatchString(r.stderr) != c.note {
			t.Errorf("mode %s: exit %d, stderr %q", c.mode, r.code, r.stderr)
		}
		// The tool-search entry is no server.
		if !strings.Contains(r.stderr, fmt.Sprintf("%d tools from 1 of 1 servers", len(c.want))) {
			t.Errorf("mode %s: the summary counts the tool-search entry: %q", c.mode, r.stderr)
		}
	}
}

// With thirty servers configured (one always loaded) and search on,
// tools --json prints the request's tools: the pinned and always-loaded
// ones and search_tools.
func TestToolsThirtyServers(t *testing.T) {
	entries, _ := mcptest.CatalogEntries(t, "time")
	cfg := writeConfig(t, entries+"- {id: search, name: tool-search, config: {mode: on, pinned: [mcp__github__create_issue]}}\n")
	var chat []chattools.Tool
	runJSON(t, &chat, "tools", "--json", "--config", cfg)
	var got []string
	for _, ct := range chat {
		got = append(got, ct.Function.Name)
	}
	if want := "mcp__github__create_issue mcp__time__convert_time mcp__time__get_current_time search_tools"; strings.Join(got, " ") != want {
		t.Errorf("tools %v, want %s", got, want)
	}
}
