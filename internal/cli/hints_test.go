package cli

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// hintAfter is the command line that follows lead in out, up to the end
// of its line or the ")" that closes it, split into words as a POSIX shell
// splits it (the hint is to be pasted into one).
func hintAfter(t *testing.T, out, lead string) []string {
	t.Helper()
	i := strings.Index(out, lead)
	if i < 0 {
		t.Fatalf("no %q in:\n%s", lead, out)
	}
	line, _, _ := strings.Cut(out[i+len(lead):], "\n")
	words, err := exec.Command("sh", "-c", `printf '%s\0' `+line).Output()
	if err != nil {
		t.Fatalf("%q does not parse as a shell's words: %v", line, err)
	}
	return strings.Split(strings.TrimSuffix(string(words), "\x00"), "\x00")
}

// The login a --url server needs is asked for with the --header values
// the command was given, a secret's shown as [redacted] (a plain one as
// it is), so the line run as shown, the secret filled back in, logs in
// with them. Before, the headers were left out of it.
func TestLoginHintKeepsTheHeaders(t *testing.T) {
	as := mcptest.NewOAuthServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}), mcptest.OAuthOptions{})
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	r := mcpbridge(t, "", "tools", "--url", as.URL, "--name", "g", "-H", "X-Tenant: acme corp", "--header", "X-Api-Key: s3cret-value")
	if r.code == 0 || strings.Contains(r.stdout+r.stderr, "s3cret-value") {
		t.Fatalf("tools: want a failure that shows no secret: %+v", r)
	}
	hint := hintAfter(t, r.stderr, "needs login: run mcpbridge ")
	want := []string{"login", "--url", as.URL, "--name", "g", "--header", "X-Tenant: acme corp", "--header", "X-Api-Key: [redacted]"}
	if strings.Join(hint, "\x00") != strings.Join(want, "\x00") {
		t.Fatalf("hint %q, want %q", hint, want)
	}
	hint[len(hint)-1] = "X-Api-Key: s3cret-value"
	if r := mcpbridge(t, "", append(hint, "--oauth-headless")...); r.code != 0 || !strings.HasPrefix(r.stdout, "Logged in to g (") {
		t.Errorf("%q as suggested: %+v", hint, r)
	}
}

// A call whose arguments come before the tool's name is refused with the
// line meant, which keeps the SOURCE the call was given (its --config, or
// its --url and --header): run as shown, it calls the tool. Before, it
// read "mcpbridge call NAME ARGS", which calls the tool of another config.
func TestSwappedCallHintKeepsTheSource(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, demoEntry)
	srv := mcptest.NewHTTPServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}), mcptest.HTTPOptions{})
	for _, c := range []struct {
		source []string
		tool   string
	}{
		{[]string{"--config", cfg}, "mcp__demo__add"},
		{[]string{"--url", srv.URL, "--header", "X-Tenant: acme"}, "mcp__remote__add"},
	} {
		args := append(append([]string{"call"}, c.source...), `{"a": 1, "b": 2}`, c.tool)
		r := mcpbridge(t, "", args...)
		hint := hintAfter(t, r.stderr, "then its arguments: mcpbridge ")
		want := append(append([]string{"call"}, c.source...), c.tool, `{"a": 1, "b": 2}`)
		if r.code != ExitUsage || strings.Join(hint, "\x00") != strings.Join(want, "\x00") {
			t.Errorf("%q: exit %d, hint %q; want %d and %q\n%s", args, r.code, hint, ExitUsage, want, r.stderr)
			continue
		}
		if r := mcpbridge(t, "", hint...); r.code != 0 || r.stdout != "3\n" {
			t.Errorf("%q as suggested: %+v", hint, r)
		}
	}
}
