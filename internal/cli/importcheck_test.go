package cli

import (
	"strings"
	"testing"
)

// import checks what it writes as validate does: each problem is told in
// the source file's terms (its server name and key) with what to do, the
// config is still written, and the exit status is 2. An env value given
// as a number is taken as its string, as VS Code takes it. A misspelt
// field is written as it is, for validate to name too.
func TestImportValidatesWhatItWrites(t *testing.T) {
	src := writeFile(t, "m.json", `{"mcpServers":{
  "a":{"command":"npx","env":{"K":1}},
  "b":{"type":"http","url":"ftp://x"},
  "d":{"commnd":"x"},
  "e":{}}}`)
	r := mcpbridge(t, "", "import", src)
	if r.code != ExitUsage {
		t.Errorf("import: exit %d, want 2\n%s", r.code, r.stderr)
	}
	for _, want := range []string{
		src + `:2:35: mcpServers.a.env.K: the number 1 is taken as the string "1"`,
		src + `:3:28: entry "b": mcpServers.b.url: must be an absolute http:// or https:// URL`,
		src + `:4:8: entry "d": mcpServers.d.commnd: unknown field: did you mean "command"?`,
		src + `:5:7: entry "e": mcpServers.e: has neither "command" (a program to start) nor "url"`,
		"would not load",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "config.") || strings.Contains(r.stderr, `entry "a"`) {
		t.Errorf("stderr speaks of the converted config, or of a valid entry:\n%s", r.stderr)
	}
	out := writeConfig(t, r.stdout)
	v := mcpbridge(t, "", "validate", "--config", out)
	if v.code != ExitUsage || strings.Contains(v.stderr, `entry "a"`) || strings.Count(v.stderr, "\n") != 5 ||
		!strings.Contains(v.stderr, `config.commnd: unknown key "commnd" (did you mean "command"?)`) {
		t.Errorf("validate of what import wrote: %+v", v)
	}
	good := writeFile(t, "good.json", `{"mcpServers":{"a":{"command":"npx","env":{"K":1}}}}`)
	if r := mcpbridge(t, "", "import", good); r.code != ExitOK || !strings.Contains(r.stdout, `K: "1"`) {
		t.Errorf("import of a valid file: %+v", r)
	}
}
