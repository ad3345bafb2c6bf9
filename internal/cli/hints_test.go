package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// hintAfter is the command line that follows lead in out, up to the end
// of its line, split into words as a POSIX shell splits it (the hint is
// to be pasted into one).
func hintAfter(t *testing.T, out, lead string) []string {
	t.Helper()
	i := strings.Index(out, lead)
	if i < 0 {
		t.Fatalf("no %q in:\n%s", lead, out)
	}
	line, _, _ := strings.Cut(out[i+len(lead):], "\n")
	return shellWords(t, line)
}

// shellWords is line split into words as a POSIX shell splits it.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
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

// add with a server's address but no scheme, by --url or after the name,
// is refused with the line meant: the URL with http:// for this machine,
// https:// for another, and the flags given (--config, headers, the
// secret's value [redacted]), so that run as shown, the secret filled
// back in, it adds the server where it was asked to. Before, --url's
// refusal suggested no URL, and the line after the name lost the flags.
func TestAddWithoutSchemeSuggestsTheLine(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, c := range []struct {
		where []string // the address and how it was given
		meant string
	}{
		{[]string{"--url", "localhost:3001/mcp"}, "http://localhost:3001/mcp"},
		{[]string{"--url=mcp.example.com:8443/mcp"}, "https://mcp.example.com:8443/mcp"},
		{[]string{"127.0.0.1:3001"}, "http://127.0.0.1:3001"},
	} {
		cfg := writeConfig(t, "")
		args := append([]string{"add", "--config", cfg, "-H", "X-Tenant: acme", "web"}, c.where...)
		args = append(args, "--header", "Authorization: Bearer s3cret")
		r := mcpbridge(t, "", args...)
		if r.code != ExitUsage || strings.Contains(r.stderr, "s3cret") {
			t.Errorf("%q: want exit %d and no secret: %+v", args, ExitUsage, r)
			continue
		}
		m := regexp.MustCompile(`\(mcpbridge ([^)]*)\)`).FindStringSubmatch(r.stderr)
		if m == nil {
			t.Errorf("%q: no line to run in:\n%s", args, r.stderr)
			continue
		}
		line := shellWords(t, m[1])
		want := []string{"add", "--config", cfg, "--header", "X-Tenant: acme", "--header", "Authorization: [redacted]", "web", c.meant}
		if c.where[0] != "127.0.0.1:3001" {
			want = slices.Insert(want, len(want)-1, "--url")
		}
		if !slices.Equal(line, want) {
			t.Errorf("%q: line %q, want %q\n%s", args, line, want, r.stderr)
			continue
		}
		line[slices.Index(line, "Authorization: [redacted]")] = "Authorization: Bearer s3cret"
		if r := mcpbridge(t, "", line...); r.code != 0 {
			t.Errorf("%q as suggested: %+v", line, r)
		}
		if got := mcpbridge(t, "", "get", "--config", cfg, "web").stdout; !strings.Contains(got, "url:        "+c.meant+"\n") {
			t.Errorf("%q as suggested added:\n%s", line, got)
		}
	}
}

// The commands that tools NAME (for a name no tool has) and status (for a
// server whose definitions the scan flagged) say to run read the SOURCE
// the command was given: run as shown, they list the tools and show the
// findings of that config. Before, they read 'mcpbridge tools' and
// 'mcpbridge scan', which read another config.
func TestListingHintsKeepTheSource(t *testing.T) {
	hs, _ := poisonedServer(t)
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, scanConfig(hs.URL, "hold"))
	r := mcpbridge(t, "", "tools", "--config", cfg, "no_such_tool")
	hint := hintAfter(t, strings.ReplaceAll(r.stderr, "' lists them)", ""), "('mcpbridge ")
	if want := []string{"tools", "--config", cfg}; !slices.Equal(hint, want) {
		t.Errorf("tools NAME: hint %q, want %q\n%s", hint, want, r.stderr)
	} else if r := mcpbridge(t, "", hint...); !strings.Contains(r.stdout, "mcp__demo__add") {
		t.Errorf("%q as suggested: %+v", hint, r)
	}
	r = mcpbridge(t, "", "status", "--config", cfg)
	hint = hintAfter(t, strings.ReplaceAll(r.stderr, "' shows the findings", ""), "; 'mcpbridge ")
	if want := []string{"scan", "--config", cfg}; !slices.Equal(hint, want) {
		t.Errorf("status: hint %q, want %q\n%s", hint, want, r.stderr)
	} else if r := mcpbridge(t, "", hint...); !strings.Contains(r.stdout, "evil") {
		t.Errorf("%q as suggested: %+v", hint, r)
	}
}

// A server that asks for no OAuth works where the OAuth token store
// cannot be made (a read-only home, XDG_STATE_HOME under a file): the
// store is needed to keep a login, not to connect. Before, every such
// HTTP server failed with the store's mkdir error. A server that does
// need a login still says why it cannot keep one.
func TestHTTPServerWithoutTokenStore(t *testing.T) {
	srv := mcptest.NewHTTPServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}), mcptest.HTTPOptions{})
	blocker := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_STATE_HOME", filepath.Join(blocker, "state"))
	cfg := writeConfig(t, "- {id: g, name: mcp-client, config: {serverName: g, transport: streamable-http, url: \""+srv.URL+"\"}}\n")
	r := mcpbridge(t, "", "tools", "--config", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "mcp__g__") {
		t.Errorf("tools: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	as := mcptest.NewOAuthServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}), mcptest.OAuthOptions{})
	needs := writeConfig(t, "- {id: o, name: mcp-client, config: {serverName: o, transport: streamable-http, url: \""+as.URL+"\"}}\n")
	r = mcpbridge(t, "", "tools", "--config", needs)
	if r.code != ExitFailed || !strings.Contains(r.stderr, `server "o" asks for an OAuth login, which cannot be kept: token store: `) || !strings.Contains(r.stderr, "set XDG_STATE_HOME") {
		t.Errorf("a server that asks for a login: exit %d\nstderr %s", r.code, r.stderr)
	}
	r = mcpbridge(t, "", "login", "--url", as.URL, "--name", "g", "--oauth-headless")
	if r.code == 0 || !strings.Contains(r.stderr, "token store") || !strings.Contains(r.stderr, "XDG_STATE_HOME") {
		t.Errorf("login without a store: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
}
