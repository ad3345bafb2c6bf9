package cli

import (
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// A flag that takes one value, given twice, is refused whatever the
// command and whichever parser takes the flag: the error names the flag
// and both values, and says to give it once. Before, the last one won
// in silence (--config a.yaml --config b.yaml read b.yaml alone).
func TestRepeatedFlagRefused(t *testing.T) {
	t.Setenv("DEEPSEEK_API_KEY", "")
	t.Chdir(t.TempDir())
	a, b := writeConfig(t, demoEntry), writeConfig(t, demoEntry)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--config", a, "--config", b, "list"}, []string{"list: flag --config given twice", `"` + a + `"`, `"` + b + `"`, "give it once"}},
		{[]string{"tools", "--config=" + a, "--config", b}, []string{"tools: flag --config given twice"}},
		{[]string{"serve", "--config", a, "--http", "127.0.0.1:0", "--http", "localhost:0"}, []string{"serve: flag --http given twice", `"127.0.0.1:0"`, `"localhost:0"`}},
		{[]string{"add", "--config", a, "-s", "user", "--scope", "project", "x", "--", "y"}, []string{"add: flag --scope given twice", `"user"`, `"project"`}},
		{[]string{"search", "--config", a, "--limit", "1", "--limit", "2", "add"}, []string{"search: flag --limit given twice", `"1"`, `"2"`}},
		{[]string{"agent", "--config", a, "-p", "hi", "--model", "m1", "--model", "m2"}, []string{"agent: flag --model given twice", `"m1"`, `"m2"`}},
		{[]string{"call", "--config", a, "--timeout", "1s", "--timeout", "2s", "mcp__demo__add"}, []string{"call: flag --timeout given twice"}},
	} {
		r := mcpbridge(t, "", c.args...)
		for _, want := range c.want {
			if r.code != ExitUsage || !strings.Contains(r.stderr, want) {
				t.Errorf("%q: exit %d, want %d and %q in:\n%s%s", c.args, r.code, ExitUsage, want, r.stdout, r.stderr)
			}
		}
	}
}

// The flags documented as repeatable (--header, --arg) add up, and a
// switch given twice is the switch.
func TestRepeatableFlagsStillRepeat(t *testing.T) {
	srv := mcptest.NewHTTPServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}), mcptest.HTTPOptions{})
	r := mcpbridge(t, "", "call", "--json", "--json", "--url", srv.URL, "-H", "X-A: 1", "--header", "X-B: 2",
		"mcp__remote__add", "--arg", "a=1", "--arg", "b=2")
	if r.code != ExitOK || !strings.Contains(r.stdout, `"text": "3"`) {
		t.Errorf("call with repeated --header, --arg and --json: %+v", r)
	}
}
