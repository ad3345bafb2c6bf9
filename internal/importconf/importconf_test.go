package importconf

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/confpos"
	"github.com/mcpbridge/mcpbridge/host"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// catalog parses converted configs as mcpbridge does.
func catalog() *host.Catalog { return host.NewCatalog(clientkind.NewKind(clientkind.KindOptions{})) }

// env is the environment the converted files expand with.
func env(name string) (string, bool) {
	switch name {
	case "SENTRY_TOKEN", "EXTERNAL_API_KEY", "DB_CONNECTION_STRING", "FIGMA_OAUTH_TOKEN", "FIGMA_TEAM":
		return "secret", true
	}
	return "", false
}

// Each format converts to the YAML in its golden file, notes and all, and
// that YAML is a valid mcpbridge config.
func TestGolden(t *testing.T) {
	inputs, _ := filepath.Glob("testdata/*.json")
	tomls, _ := filepath.Glob("testdata/*.toml")
	inputs = append(inputs, tomls...)
	if len(inputs) < 5 {
		t.Fatalf("inputs: %v", inputs)
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Convert(filepath.Base(in), data)
			if err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(in, filepath.Ext(in)) + ".golden.yaml"
			if *update {
				os.WriteFile(golden, res.YAML, 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(res.YAML)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", golden, diff)
			}
			if _, err := catalog().Parse(golden, res.YAML, env); err != nil {
				t.Errorf("the converted config is invalid:\n%v", err)
			}
		})
	}
}

func TestDetect(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Format
	}{
		{"- id: a\n  name: mcp-client\n", FormatYAML},
		{"", FormatYAML},
		{"# comment\n[]\n", FormatYAML},
		{"\uFEFF  {\"mcpServers\": {}}", FormatMCPServers},
		{"// settings\n{}", FormatMCPServers},
		{"model = \"x\"\n[mcp_servers.a]\ncommand = \"a\"\n", FormatCodex},
		{"mcp_servers.a.command = \"a\"\n", FormatCodex},
		{"[ mcp_servers ]\n", FormatCodex},
		{"- id: mcp_servers\n", FormatYAML},
	} {
		if got := Detect([]byte(c.in)); got != c.want {
			t.Errorf("Detect(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	if _, err := Convert("x.yaml", []byte("[]")); !errors.Is(err, ErrNotForeign) {
		t.Errorf("Convert of YAML: %v", err)
	}
}

// Notes carry the position of the field in the source file.
func TestNotePositions(t *testing.T) {
	data, _ := os.ReadFile("testdata/cursor.json")
	res, err := Convert("cursor.json", data)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range res.Notes {
		got = append(got, n.Format("cursor.json"))
	}
	want := []string{
		`cursor.json:6:7: mcpServers.web-search.envFile: not used by mcpbridge (left out)`,
		`cursor.json:12:14: mcpServers.old-remote.url: no type: the path ends in /sse, so the legacy SSE transport is used (set "type": "http" for Streamable HTTP)`,
		`cursor.json:19:18: mcpServers.cline-style.timeout: 120 taken as seconds (toolCallTimeoutMs: 120000)`,
		`cursor.json:18:7: mcpServers.cline-style.autoApprove: not used by mcpbridge (left out)`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
}

// A config error host finds in the converted YAML maps back to the line and
// column of the source file.
func TestPositionMapsBack(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      string // source position of the error
	}{
		{"json", "{\"mcpServers\": {\n  \"a\": {\"command\": \"x\",\n    \"args\": [\"ok\", 7]}}}", "3:20"},
		{"json url", "{\"mcpServers\": {\"w\": {\n  \"url\": \"ftp://x\"}}}", "2:10"},
		{"toml", "[mcp_servers.a]\ncommand = \"x\"\nargs = [\"ok\", 7]\n", "3:1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Convert("f", []byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			_, err = catalog().Parse("f", res.YAML, env)
			var ces confpos.Errors
			if !errors.As(err, &ces) || len(ces) != 1 {
				t.Fatalf("want one config error, got %v\n%s", err, res.YAML)
			}
			p, ok := res.Position(ces[0].Line, ces[0].Column)
			if got := fmt.Sprintf("%d:%d", p.Line, p.Column); !ok || got != c.want {
				t.Errorf("%v maps to %s (%v), want %s", ces[0], got, ok, c.want)
			}
		})
	}
}

// A file that cannot be read says where and why.
func TestConvertErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"{\"mcpServers\": {\n  \"a\": {\"command\": \"x\",}}}", `f:2:24: invalid JSON: invalid character '}'`},
		{"{\"mcpServers\": {}} {}", `f:1:20: invalid JSON: more than one JSON value`},
		{`{"servers": 1}`, `f: no "mcpServers" object`},
		{`{"servers": {}}`, `f:1:13: servers: VS Code's MCP servers are not read: add each one with mcpbridge add-json`},
		{`{"mcp": {"servers": {}}}`, `f:1:21: mcp.servers: VS Code's MCP servers are not read`},
		{`{"mcpServers": []}`, `f:1:16: mcpServers must be an object of servers, got a list`},
		{`// only a comment` + "\n[1]", `f:2:1: a JSON config must be an object with "mcpServers"`},
		{"[mcp_servers.a]\ncommand = = 1\n", `f:2:11: invalid TOML:`},
		{"mcp_servers = 1\n", `f: mcp_servers must be a table of servers`},
	} {
		_, err := Convert("f", []byte(c.src))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Convert(%q) = %v, want %s…", c.src, err, c.want)
		}
	}
}

// Entries that are not objects, or have no transport, are converted with a
// note that is the entry's problem (a mistake), and the config they make is
// refused by host.
func TestServersWithoutTransport(t *testing.T) {
	for _, src := range []string{
		`{"mcpServers": {"a": 1}}`,
		`{"mcpServers": {"a": {"env": {}}}}`,
		"mcp_servers.a = 1\n",
	} {
		res, err := Convert("f", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Notes) != 1 || !res.Notes[0].Mistake || !strings.Contains(res.Notes[0].Msg, "url") {
			t.Errorf("%s: notes %+v", src, res.Notes)
		}
		if _, err := catalog().Parse("f", res.YAML, env); err == nil {
			t.Errorf("%s: converted config accepted:\n%s", src, res.YAML)
		}
	}
}

func TestExpandDollar(t *testing.T) {
	for in, want := range map[string]string{
		"$A":           "${A}",
		"$A$B":         "${A}${B}",
		"x-$HOME/y":    "x-${HOME}/y",
		"${A:-$B}":     "${A:-${B}}",
		"$$A":          "$$A",
		"price: $5":    "price: $5",
		"${ALREADY}":   "${ALREADY}",
		"no reference": "no reference",
		"${env:A}/$B":  "${A}/${B}",
		"${userHome}":  "${HOME}",
		"${env:}":      "${env:}",
	} {
		if got := expandDollar(in); got != want {
			t.Errorf("expandDollar(%q) = %q, want %q", in, got, want)
		}
	}
}

// A field that is known but means nothing for the server's transport, or
// a disabled that is not a boolean, is noted with its path, never dropped
// silently.
func TestInapplicableFieldsNoted(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []string
		disabled  bool
	}{
		{"json stdio with headers", `{"mcpServers": {"x": {"command": "srv", "headers": {"A": "b"}}}}`,
			[]string{`f:1:41: mcpServers.x.headers: not used for a stdio server (left out)`}, false},
		{"json url with env", `{"mcpServers": {"x": {"url": "https://h/mcp", "env": {"A": "b"}, "args": [], "cwd": "/"}}}`,
			[]string{
				`f:1:47: mcpServers.x.env: not used for a streamable-http server (left out)`,
				`f:1:66: mcpServers.x.args: not used for a streamable-http server (left out)`,
				`f:1:78: mcpServers.x.cwd: not used for a streamable-http server (left out)`,
			}, false},
		{"json command and url", `{"mcpServers": {"x": {"command": "x", "url": "https://h/mcp", "serverUrl": "https://h/mcp"}}}`,
			[]string{
				`f:1:39: mcpServers.x.url: not used for a stdio server (left out)`,
				`f:1:63: mcpServers.x.serverUrl: not used for a stdio server (left out)`,
			}, false},
		{"json two urls", `{"mcpServers": {"x": {"httpUrl": "https://h/mcp", "url": "https://h/sse"}}}`,
			[]string{`f:1:51: mcpServers.x.url: not used: httpUrl is the server's URL (left out)`}, false},
		{"json disabled string", `{"mcpServers": {"x": {"command": "x", "disabled": "true"}}}`,
			[]string{`f:1:51: mcpServers.x.disabled: must be true or false, got the string "true": taken as true (the entry is written disabled)`}, true},
		{"json disabled string false", `{"mcpServers": {"x": {"command": "x", "disabled": "False"}}}`,
			[]string{`f:1:51: mcpServers.x.disabled: must be true or false, got the string "False": taken as false`}, false},
		{"json disabled other", `{"mcpServers": {"x": {"command": "x", "disabled": 1}}}`,
			[]string{`f:1:51: mcpServers.x.disabled: must be true or false, got the integer 1: the entry is written disabled (set it to false to run the server)`}, true},
		{"codex url with stdio fields", "[mcp_servers.x]\nurl = \"https://h/mcp\"\nenv = {A = \"b\"}\nenv_vars = [\"C\"]\nargs = []\ncwd = \"/\"\n",
			[]string{
				`f:5:1: mcp_servers.x.args: not used for a streamable-http server (left out)`,
				`f:6:1: mcp_servers.x.cwd: not used for a streamable-http server (left out)`,
				`f:3:1: mcp_servers.x.env: not used for a streamable-http server (left out)`,
				`f:4:1: mcp_servers.x.env_vars: not used for a streamable-http server (left out)`,
			}, false},
		{"codex command with http fields", "[mcp_servers.x]\ncommand = \"x\"\nurl = \"https://h/mcp\"\nhttp_headers = {A = \"b\"}\nenv_http_headers = {B = \"C\"}\nbearer_token_env_var = \"T\"\n",
			[]string{
				`f:6:1: mcp_servers.x.bearer_token_env_var: not used for a stdio server (left out)`,
				`f:5:1: mcp_servers.x.env_http_headers: not used for a stdio server (left out)`,
				`f:4:1: mcp_servers.x.http_headers: not used for a stdio server (left out)`,
				`f:3:1: mcp_servers.x.url: not used for a stdio server (left out)`,
			}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Convert("f", []byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range res.Notes {
				got = append(got, n.Format("f"))
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
			if _, err := catalog().Parse("f", res.YAML, env); err != nil {
				t.Errorf("the converted config is invalid:\n%v\n%s", err, res.YAML)
			}
			if got := strings.Contains(string(res.YAML), "disabled: true"); got != c.disabled {
				t.Errorf("written disabled: %t, want %t\n%s", got, c.disabled, res.YAML)
			}
		})
	}
}
