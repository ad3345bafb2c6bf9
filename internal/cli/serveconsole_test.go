package cli

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serve --http --console with no identities takes the console token from
// MCPBRIDGE_CONSOLE_TOKEN (it prints one it made without it); the console
// refuses another token, signs its holder in, lists the config's
// server, tries a tool through the gateway it runs in, and restarts and
// reloads the server. The browser
// tests of internal/console cover the pages themselves.
func TestServeConsole(t *testing.T) {
	cfg := writeConfig(t, fixtureEntries(t, "a"))
	const token = "chosen-console-token"
	p := startServing(t, []string{consoleTokenVar + "=" + token}, "serve", "--http", "127.0.0.1:0", "--config", cfg, "--console")
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	base := p.base() + "/console"
	post := func(path string, form url.Values) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", p.base())
		return do(t, c, req)
	}
	get := func(path string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		return do(t, c, req)
	}
	if code, body := post("/login", url.Values{"token": {"wrong"}}); code != http.StatusUnauthorized || !strings.Contains(body, "not the console&#39;s token") {
		t.Errorf("a wrong token: %d %q, want 401 saying it is not the console's token", code, body)
	}
	if code, body := post("/login", url.Values{"token": {token}}); code != http.StatusOK || !strings.Contains(body, `data-server="a"`) {
		t.Fatalf("the console token: %d %q, want the servers page listing a", code, body)
	}
	var code int
	var page string
	mcptest.Eventually(t, 20*time.Second, func() bool {
		code, page = get("/tools/mcp__a__greet")
		return code != http.StatusNotFound
	}, "server a's tools registered")
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	if code != http.StatusOK || csrf == nil {
		t.Fatalf("greet's page: %d %q, want its try-it form", code, page)
	}
	if code, body := post("/tools/mcp__a__greet", url.Values{"csrf": {csrf[1]}, "arg.name": {"console"}}); code != http.StatusOK || !strings.Contains(body, "Hello, console!") {
		t.Errorf("trying greet: %d %q, want its greeting", code, body)
	}
	// The console token's holder may restart and reload an entry: the
	// host starts it again and it is ready when the page answers. Each
	// form is sent from the page, whose token serves once.
	for _, action := range []string{"restart", "reload"} {
		_, page := get("/servers/a")
		csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
		if csrf == nil {
			t.Fatalf("server a's page has no form: %q", page)
		}
		if code, body := post("/servers/a/"+action, url.Values{"csrf": {csrf[1]}}); code != http.StatusOK || !strings.Contains(body, "a: "+action+"ed, now ready") {
			t.Errorf("%s of a: %d %q, want it done and a ready", action, code, body)
		}
	}
	if log := p.stderr.String(); !strings.Contains(log, "restart asked for, starting it again (the running instance serves until the new one is ready)") {
		t.Errorf("the restart started no new instance of a; log:\n%s", log)
	}
}

func do(t *testing.T, c *http.Client, req *http.Request) (int, string) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("%s %s: Content-Security-Policy %q, want the console's", req.Method, req.URL.Path, csp)
	}
	return resp.StatusCode, string(b)
}

// A gateway entry's console block turns the console on without --console:
// its granted identity signs in with its own token, and one not granted
// is refused. The console keeps the policy's screening of the lists: ci
// is not shown the tools the policy denies it.
func TestServeConsoleFromGatewayEntry(t *testing.T) {
	cfg := writeConfig(t, fixtureEntries(t, "a")+"- {id: gw, name: gateway, config: {auth: {tokens: {ops: GW_OPS, ci: GW_CI}}, console: {allow: {subjects: [ops]}},"+
		" policy: [{subjects: [ops], allow: ['*']}, {subjects: [ci], allow: [mcp__a__greet]}]}}\n")
	p := startServing(t, []string{"GW_OPS=ops-token", "GW_CI=ci-token"}, "serve", "--http", "127.0.0.1:0", "--config", cfg)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	login := func(token string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, p.base()+"/console/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", p.base())
		return do(t, c, req)
	}
	mcptest.Eventually(t, 20*time.Second, func() bool {
		_, body := login("ci-token")
		return !strings.Contains(body, "not in force")
	}, "the gateway entry in force")
	if code, body := login("ci-token"); code != http.StatusUnauthorized || !strings.Contains(body, "not granted the console") {
		t.Errorf("ci's token: %d %q, want 401, not granted", code, body)
	}
	if code, body := login("ops-token"); code != http.StatusOK || !strings.Contains(body, `data-server="a"`) {
		t.Errorf("ops's token: %d %q, want the servers page", code, body)
	}
	listed := func(token string) []string {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: p.url, HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		return waitTools(t, cs, "mcp__a__greet")
	}
	if all := listed("ops-token"); len(all) < 2 {
		t.Fatalf("ops is listed %v, want every tool of a", all)
	}
	if got := listed("ci-token"); !slices.Equal(got, []string{"mcp__a__greet"}) {
		t.Errorf("ci is listed %v, want only what the policy allows it", got)
	}
}
