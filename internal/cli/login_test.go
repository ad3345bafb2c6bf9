package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/oauth"
	"github.com/mcpbridge/mcpbridge/internal/report"
)

// browserEnv makes the re-executed test binary the browser of a login
// ($BROWSER): it follows the authorization URL's redirects to mcpbridge's
// loopback callback, as a browser whose user approves would.
const browserEnv = "CLITEST_BROWSER"

// browserDelayEnv, a duration, makes that browser wait before it follows.
const browserDelayEnv = "CLITEST_BROWSER_DELAY"

func runBrowser() int {
	if d, err := time.ParseDuration(os.Getenv(browserDelayEnv)); err == nil {
		time.Sleep(d) // a person who takes a while to approve
	}
	resp, err := http.Get(os.Args[len(os.Args)-1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "browser:", err)
		return 1
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintln(os.Stderr, "browser: the callback answered", resp.Status)
		return 1
	}
	return 0
}

// A server behind OAuth: needs-login until mcpbridge login (browser step
// replaced by following the redirect), then calls work from the stored
// token, which no output shows; logout forgets it.
func TestLoginLogout(t *testing.T) {
	as := mcptest.NewOAuthServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}), mcptest.OAuthOptions{})
	state := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("BROWSER", exe)
	t.Setenv(browserEnv, "1")
	cfg := writeConfig(t, fmt.Sprintf(`- id: g
  name: mcp-client
  config: {serverName: guarded, transport: streamable-http, url: %q}
`, as.URL))
	var outputs []string
	step := func(wantCode int, args ...string) run {
		t.Helper()
		r := mcpbridge(t, "", args...)
		outputs = append(outputs, r.stdout, r.stderr)
		if r.code != wantCode {
			t.Fatalf("%v: exit %d, want %d\nstdout: %s\nstderr: %s", args, r.code, wantCode, r.stdout, r.stderr)
		}
		return r
	}
	r := step(1, "status", "--config", cfg)
	if !strings.Contains(r.stdout, "g: needs login: run mcpbridge login guarded --config "+shellQuote(cfg)) {
		t.Errorf("status before the login:\n%s", r.stdout)
	}
	r = step(0, "login", "guarded", "--config", cfg)
	if !strings.Contains(r.stdout, "Logged in to guarded (") || !strings.Contains(r.stderr, "To log in to guarded, open this URL") {
		t.Errorf("login: %+v", r)
	}
	r = step(0, "call", "--config", cfg, "mcp__guarded__echo", `{"message":"hi"}`)
	if strings.TrimSpace(r.stdout) != "Echo: hi" {
		t.Errorf("call: %q", r.stdout)
	}
	r = step(0, "status", "--json", "--config", cfg)
	var st report.Status
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || st.Servers[0].State != "ready" {
		t.Errorf("status after the login: %v\n%s", err, r.stdout)
	}
	access := storedAccessToken(t, state)
	for _, out := range outputs {
		if strings.Contains(out, access) {
			t.Errorf("an output shows the access token:\n%s", out)
		}
	}
	if n := as.Authorizations(); n != 1 {
		t.Errorf("%d authorizations, want 1", n)
	}
	r = step(0, "logout", "guarded", "--config", cfg)
	if strings.TrimSpace(r.stdout) != "Logged out of guarded." {
		t.Errorf("logout: %q", r.stdout)
	}
	r = step(0, "logout", "g", "--config", cfg)
	if strings.TrimSpace(r.stdout) != "No stored login for guarded." {
		t.Errorf("second logout: %q", r.stdout)
	}
	step(1, "call", "--config", cfg, "mcp__guarded__echo", `{"message":"hi"}`)
}

// login finds its server among entries that are not servers, whatever
// their order: it gives that server the login's long timeout and reports
// that server's state. A tool-search entry first was started with the
// server's config (a panic); a permissions entry first kept the server's
// short timeout and was reported instead ("did not ask for a login").
func TestLoginServerAfterOtherEntries(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("BROWSER", exe)
	t.Setenv(browserEnv, "1")
	for _, tc := range []struct{ name, first, timeout, delay string }{
		{"tool-search first", "- {id: tool-search, name: tool-search}", "", ""},
		// The person approves after the server's own startup timeout.
		{"permissions first", "- {id: permissions, name: permissions, config: {allow: [x]}}", ", startupTimeoutMs: 300", "1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := mcptest.NewOAuthServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}), mcptest.OAuthOptions{})
			t.Setenv("XDG_STATE_HOME", t.TempDir())
			t.Setenv(browserDelayEnv, tc.delay)
			cfg := writeConfig(t, fmt.Sprintf(`%s
- id: g
  name: mcp-client
  config: {serverName: guarded, transport: streamable-http, url: %q%s}
`, tc.first, as.URL, tc.timeout))
			r := mcpbridge(t, "", "login", "guarded", "--config", cfg)
			if r.code != 0 || !strings.HasPrefix(r.stdout, "Logged in to guarded (") {
				t.Errorf("login: %+v", r)
			}
			if n := as.Authorizations(); n != 1 {
				t.Errorf("%d authorizations, want 1", n)
			}
		})
	}
}

// storedAccessToken is the access token of the one record in the store.
func storedAccessToken(t *testing.T, state string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(state, "mcpbridge", "oauth", "*.json"))
	if len(files) != 1 {
		t.Fatalf("store holds %v, want one record", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var rec oauth.Record
	if err := json.Unmarshal(data, &rec); err != nil || rec.Token.AccessToken == "" {
		t.Fatalf("record: %v", err)
	}
	return rec.Token.AccessToken
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/a.yaml": "/tmp/a.yaml", "my dir/a.yaml": "'my dir/a.yaml'", "it's": `'it'\''s'`, "": "''",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLoginUsage(t *testing.T) {
	cfg := writeConfig(t, `- id: s
  name: mcp-client
  config: {serverName: local, transport: stdio, command: echo}
`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"login"}, "login: want NAME, or --url URL"},
		{[]string{"login", "a", "b", "--config", cfg}, "login: want NAME, or --url URL"},
		{[]string{"logout", "nope", "--config", cfg}, `logout: no enabled server named "nope" in ` + cfg},
		{[]string{"login", "local", "--config", cfg}, `login: server "local" is not a streamable-http server: only those use OAuth`},
		{[]string{"login", "--url", "ftp://x"}, "--url: "},
	} {
		r := mcpbridge(t, "", tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	// An entry whose config has a problem (its URL's variable unset) is
	// named with its problem: it used to be "no enabled server named
	// github: did you mean github?".
	broken := writeConfig(t, `- id: github
  name: mcp-client
  config: {serverName: github, transport: streamable-http, url: "${LOGIN_TEST_UNSET_URL}"}
`)
	r := mcpbridge(t, "", "logout", "github", "--config", broken)
	if r.code == ExitOK || !strings.Contains(r.stderr, `logout: server "github" cannot be used until its entry is fixed`) || !strings.Contains(r.stderr, "LOGIN_TEST_UNSET_URL") || strings.Contains(r.stderr, "did you mean") {
		t.Errorf("logout of an entry with a problem: %+v", r)
	}
	// Named by its serverName, not its id, such an entry is found too
	// (it answered `did you mean "fs"?`, the very name asked); an entry
	// that is not a server is never suggested as one.
	broken = writeConfig(t, `- id: files
  name: mcp-client
  config: {serverName: fs, transport: streamable-http, url: "${LOGIN_TEST_UNSET_URL}"}
- {id: permissions, name: permissions, config: {allow: [x]}}
`)
	for _, cmd := range []string{"login", "logout"} {
		r = mcpbridge(t, "", cmd, "fs", "--config", broken)
		if r.code != ExitUsage || !strings.Contains(r.stderr, cmd+`: server "fs" cannot be used until its entry is fixed: `+broken+":3:") || strings.Contains(r.stderr, "did you mean") {
			t.Errorf("%s of an entry with a problem, by its serverName: %+v", cmd, r)
		}
	}
	r = mcpbridge(t, "", "login", "permissions", "--config", broken)
	if r.code != ExitUsage || !strings.Contains(r.stderr, `login: no enabled server named "permissions" in `+broken) || strings.Contains(r.stderr, "did you mean") {
		t.Errorf("login of an entry that is not a server: %+v", r)
	}
}

// login --url --oauth-headless logs in without a browser; the token is
// the server URL's, whatever name the server is given later.
func TestLoginURLHeadless(t *testing.T) {
	as := mcptest.NewOAuthServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}), mcptest.OAuthOptions{})
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	r := mcpbridge(t, "", "login", "--url", as.URL, "--name", "g", "--oauth-headless")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "Logged in to g (") {
		t.Fatalf("login: %+v", r)
	}
	r = mcpbridge(t, "", "call", "--url", as.URL, "mcp__remote__echo", `{"message":"x"}`)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "Echo: x" {
		t.Errorf("call: %+v", r)
	}
	if n := as.Authorizations(); n != 1 {
		t.Errorf("%d authorizations, want 1", n)
	}
}

// A login to a server that asks for none says so.
func TestLoginNotNeeded(t *testing.T) {
	srv := mcptest.NewHTTPServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}), mcptest.HTTPOptions{})
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	r := mcpbridge(t, "", "login", "--url", srv.URL, "--oauth-headless")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "remote did not ask for a login (") {
		t.Errorf("login: %+v", r)
	}
}

// A --url server that wants a static bearer token (serve --token-env), not
// OAuth: tools and login say to pass the token with --header, and name the
// server by its --url; the server's text is quoted on one line.
func TestTokenServerWantsAHeaderNotALogin(t *testing.T) {
	cfg := writeConfig(t, fixtureEntries(t, "a"))
	p := startServing(t, []string{"GW_AUTH=s3cret"}, "serve", "--http", "127.0.0.1:0", "--config", cfg, "--token-env", "GW_AUTH")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	want := "pass it with --header 'Authorization: Bearer …'"
	for _, cmd := range []string{"tools", "login"} {
		r := mcpbridge(t, "", cmd, "--url", p.url)
		if r.code == 0 || !strings.Contains(r.stdout+r.stderr, want) || strings.Contains(r.stdout+r.stderr, "login remote") || strings.Contains(r.stderr, `\n`) {
			t.Errorf("%s: want %q, no login by name and no escaped line break, in %+v", cmd, want, r)
		}
	}
	if r := mcpbridge(t, "", "tools", "--url", p.url, "--header", "Authorization: Bearer s3cret"); r.code != 0 {
		t.Errorf("tools with the token: %+v", r)
	}
}

// With --url, the login a server needs is asked for by its --url (and
// --name), which login takes in place of an entry's name.
func TestURLLoginHintNamesTheURL(t *testing.T) {
	as := mcptest.NewOAuthServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}), mcptest.OAuthOptions{})
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	r := mcpbridge(t, "", "tools", "--url", as.URL, "--name", "g")
	want := "needs login: run mcpbridge login --url " + shellQuote(as.URL) + " --name g\n"
	if r.code == 0 || !strings.Contains(r.stderr, want) {
		t.Fatalf("tools: want %q in %+v", want, r)
	}
	hint := strings.TrimSpace(r.stderr[strings.Index(r.stderr, "run mcpbridge ")+len("run mcpbridge "):])
	hint = strings.SplitN(hint, "\n", 2)[0]
	if r := mcpbridge(t, "", append(strings.Fields(hint), "--oauth-headless")...); r.code != 0 || !strings.HasPrefix(r.stdout, "Logged in to g (") {
		t.Errorf("%s as suggested: %+v", hint, r)
	}
}

// A token the server refuses, given by the user in an Authorization
// header, is said to be that: the header is named (its value never), with
// what the server said in WWW-Authenticate, and how to correct it.
func TestRefusedHeaderTokenSaysSo(t *testing.T) {
	cfg := writeConfig(t, fixtureEntries(t, "a"))
	p := startServing(t, []string{"GW_AUTH=s3cret"}, "serve", "--http", "127.0.0.1:0", "--config", cfg, "--token-env", "GW_AUTH")
	expired := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description="The access token expired"`)
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	t.Cleanup(expired.Close)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	want := "the server refused the credential given in the Authorization header (401 Unauthorized"
	fix := "correct it in --header 'Authorization: …' (with --url), or in the entry's headers"
	for _, c := range []struct{ url, said string }{
		{p.url, want + "):"},
		{expired.URL, want + ": invalid_token: The access token expired):"},
	} {
		r := mcpbridge(t, "", "tools", "--url", c.url, "--header", "Authorization: Bearer wr0ng")
		if r.code != ExitFailed || !strings.Contains(r.stderr, c.said) || !strings.Contains(r.stderr, fix) || strings.Contains(r.stderr, "wr0ng") {
			t.Errorf("tools --url %s: want %q and %q, not the token, in %+v", c.url, c.said, fix, r)
		}
	}
}
