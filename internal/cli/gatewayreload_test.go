package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// gatewayEntry is a gateway entry whose policy rule lets the anonymous
// caller use tools; key is the rule's key, "allow" or a misspelling.
func gatewayEntry(key, tools string) string {
	return "- id: gw\n  name: gateway\n  config:\n    policy: [{subjects: [anonymous], " + key + ": [" + tools + "]}]\n"
}

// reloadedServe is serve --http over the fixture fx, reloaded by
// rewriting its config file, with an MCP session open on it.
type reloadedServe struct {
	p   *servingProcess
	cfg string
	cs  *mcp.ClientSession
	// http sends the probes; nil: http.DefaultClient.
	http *http.Client
}

func startReloadedServe(t *testing.T, config string) *reloadedServe {
	t.Helper()
	return startReloadedServeEnv(t, nil, config)
}

// startReloadedServeEnv is startReloadedServe with the variables env
// ("K=V") set for serve.
func startReloadedServeEnv(t *testing.T, env []string, config string) *reloadedServe {
	t.Helper()
	return startReloadedServeWith(t, env, nil, config)
}

// reloadToken is the --token-env token of startReloadedServeToken.
const reloadToken = "reload-token"

// startReloadedServeToken is startReloadedServe with --token-env: its
// session and probes send the token.
func startReloadedServeToken(t *testing.T, config string) *reloadedServe {
	t.Helper()
	return startReloadedServeWith(t, []string{"GW_RELOAD_TOKEN=" + reloadToken}, &http.Client{Transport: bearer{reloadToken}}, config,
		"--token-env", "GW_RELOAD_TOKEN")
}

// startReloadedServeWith is startReloadedServeEnv with serve's args
// besides --http and --config, its requests sent with client (nil:
// http.DefaultClient).
func startReloadedServeWith(t *testing.T, env []string, client *http.Client, config string, args ...string) *reloadedServe {
	t.Helper()
	cfg := writeConfig(t, config)
	p := startServing(t, env, append([]string{"serve", "--http", "127.0.0.1:0", "--config", cfg}, args...)...)
	s := &reloadedServe{p: p, cfg: cfg, http: client}
	s.cs = s.connect(t)
	t.Cleanup(func() { s.cs.Close() })
	return s
}

// connect opens an MCP session on serve.
func (s *reloadedServe) connect(t *testing.T) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: s.p.url, HTTPClient: s.http}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, s.p.stderr)
	}
	return cs
}

// client is what sends serve's requests.
func (s *reloadedServe) client() *http.Client {
	if s.http == nil {
		return http.DefaultClient
	}
	return s.http
}

// reload writes config and waits until serve has logged its outcome for
// the gateway entry: a line naming entry=gw that was not there before.
func (s *reloadedServe) reload(t *testing.T, config, logged string) {
	t.Helper()
	before := strings.Count(s.p.stderr.String(), logged)
	if err := os.WriteFile(s.cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	mcptest.Eventually(t, 30*time.Second, func() bool { return strings.Count(s.p.stderr.String(), logged) > before },
		"serve to log %q after the reload:\n%s", logged, s.p.stderr)
}

// call is the outcome of a call of tool: its text, or the error that
// answered it.
func (s *reloadedServe) call(t *testing.T, tool string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"a": 1, "b": 2}})
	if err != nil {
		return "", err
	}
	if len(res.Content) == 0 {
		return "", nil
	}
	text, _ := res.Content[0].(*mcp.TextContent)
	return text.Text, nil
}

// mustServe fails unless a call of mcp__fx__add is answered 3.
func (s *reloadedServe) mustServe(t *testing.T, when string) {
	t.Helper()
	if got, err := s.call(t, "mcp__fx__add"); err != nil || got != "3" {
		t.Errorf("%s: mcp__fx__add answered %q, %v; want 3", when, got, err)
	}
}

// mustRefuse fails unless a call of mcp__fx__add is refused as the
// gateway entry not in force.
func (s *reloadedServe) mustRefuse(t *testing.T, when string) {
	t.Helper()
	if got, err := s.call(t, "mcp__fx__add"); err == nil || !strings.Contains(err.Error(), "gateway entry is not in force") {
		t.Errorf("%s: mcp__fx__add answered %q, %v; want it refused, the gateway entry not in force", when, got, err)
	}
}

// probe is a probe's status and the health report it served.
type probe struct {
	status int
	body   string
	health struct {
		Ready    bool   `json:"ready"`
		Refusing string `json:"refusing"`
	}
}

func (s *reloadedServe) probe(t *testing.T, path string) probe {
	t.Helper()
	resp, err := s.client().Get(s.p.base() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	p := probe{status: resp.StatusCode, body: string(body)}
	if err := json.Unmarshal(body, &p.health); err != nil {
		t.Fatalf("%s: %v: %s", path, err, body)
	}
	return p
}

// mustProbe fails unless /healthz and /readyz both answer ready, agree
// with the report, and, when not ready, say why: that no call is served,
// and reason.
func (s *reloadedServe) mustProbe(t *testing.T, when string, ready bool, reason string) {
	t.Helper()
	status := http.StatusOK
	if !ready {
		status = http.StatusServiceUnavailable
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		p := s.probe(t, path)
		refusing := strings.Contains(p.health.Refusing, "gateway entry is not in force")
		if p.status != status || p.health.Ready != ready || refusing == ready || !strings.Contains(p.body, reason) {
			t.Errorf("%s: %s %d %s; want %d, ready %t, saying %q", when, path, p.status, p.body, status, ready, reason)
		}
	}
}

// A gateway entry that a reload adds to a running serve and that does
// not load (a misspelt key, an audit file that cannot be opened) leaves
// the gateway serving no call until a reload brings a working entry or
// removes it again; its probes meanwhile say it is not ready and why:
// every call was answered, the entry's failure only logged, and the
// probes disagreed (/readyz 200, /healthz 503 with "ready": true).
func TestServeReloadAddingBrokenGatewayEntryServesNoCall(t *testing.T) {
	t.Parallel()
	fx := fixtureEntries(t, "fx")
	broken := fx + gatewayEntry("alow", `"mcp__fx__add"`)
	s := startReloadedServe(t, fx)
	s.mustServe(t, "without a gateway entry")
	s.mustProbe(t, "without a gateway entry", true, `"ok":true`)

	s.reload(t, broken, `msg="failed to start" entry=gw`)
	s.mustRefuse(t, "with a misspelt gateway entry added")
	s.mustProbe(t, "with a misspelt gateway entry added", false, "config.policy[0].alow: unknown key")

	s.reload(t, fx, "config file changed")
	mcptest.Eventually(t, 10*time.Second, func() bool { _, err := s.call(t, "mcp__fx__add"); return err == nil },
		"calls to be served with the misspelt entry removed")
	s.mustServe(t, "with the misspelt entry removed")
	s.mustProbe(t, "with the misspelt entry removed", true, `"ok":true`)

	unapplied := gatewayEntry("allow", `"*"`) + "    audit: {file: " + filepath.Join(t.TempDir(), "missing", "audit.jsonl") + "}\n"
	s.reload(t, fx+unapplied, `msg="failed to start" entry=gw`)
	s.mustRefuse(t, "with a gateway entry added whose audit file cannot be opened")
	s.mustProbe(t, "with a gateway entry added whose audit file cannot be opened", false, "gateway audit")
	s.reload(t, fx+gatewayEntry("allow", `"mcp__fx__add"`), "config file changed")
	mcptest.Eventually(t, 10*time.Second, func() bool { _, err := s.call(t, "mcp__fx__add"); return err == nil },
		"calls to be served with the entry fixed")
	s.mustServe(t, "with the entry fixed")
	if got, err := s.call(t, "mcp__fx__greet"); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("with the entry fixed, the tool its policy denies answered %q, %v; want it unknown", got, err)
	}
	s.mustProbe(t, "with the entry fixed", true, `"ok":true`)
}

// A working gateway entry that a reload breaks keeps its config: what it
// allows is served, what it denies stays unknown, and the gateway stays
// ready.
func TestServeReloadBreakingGatewayEntryKeepsIt(t *testing.T) {
	t.Parallel()
	fx := fixtureEntries(t, "fx")
	s := startReloadedServe(t, fx+gatewayEntry("allow", `"mcp__fx__add"`))
	s.mustServe(t, "with the gateway entry")

	s.reload(t, fx+gatewayEntry("alow", `"*"`), `msg="the new config did not start, the previous config keeps running" entry=gw`)
	s.mustServe(t, "with the gateway entry misspelt")
	if got, err := s.call(t, "mcp__fx__greet"); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("with the gateway entry misspelt, the tool its policy denied answered %q, %v; want it unknown still", got, err)
	}
	if p := s.probe(t, "/readyz"); p.status != http.StatusOK || !p.health.Ready {
		t.Errorf("with the gateway entry misspelt and its config kept, /readyz %d %s; want 200", p.status, p.body)
	}
}

// A reload that removes a working gateway entry leaves the gateway serving
// no call, saying so in a warning and in its probes, until one is back
// (restarting serve runs it without one): removing the entry that guards
// every call does not open the gateway.
func TestServeReloadRemovingGatewayEntryServesNoCall(t *testing.T) {
	t.Parallel()
	fx := fixtureEntries(t, "fx")
	s := startReloadedServe(t, fx+gatewayEntry("allow", `"mcp__fx__add"`))
	s.mustServe(t, "with the gateway entry")

	s.reload(t, fx, "gateway entry stopped")
	if warn := `level=WARN msg="gateway entry removed by the reload`; !strings.Contains(s.p.stderr.String(), warn) {
		t.Errorf("the removal was not warned of (%q):\n%s", warn, s.p.stderr)
	}
	s.mustRefuse(t, "with the gateway entry removed")
	s.mustProbe(t, "with the gateway entry removed", false, "no gateway entry is in force")

	s.reload(t, fx+gatewayEntry("allow", `"mcp__fx__add"`), "config file changed")
	mcptest.Eventually(t, 10*time.Second, func() bool { _, err := s.call(t, "mcp__fx__add"); return err == nil },
		"calls to be served with the entry back")
	s.mustProbe(t, "with the gateway entry back", true, `"ok":true`)
}

// A reload that adds auth to serve --http started without a token is
// refused, saying what the gateway does meanwhile: with a gateway entry
// in force before, it keeps that config and serves as it did; with none
// (serve started without a gateway entry), it serves no call until the
// entry loads or is removed. Both said "(the gateway keeps the config it
// had)", though in the second there was none to keep.
func TestServeReloadAddingAuthSaysWhatTheGatewayKeeps(t *testing.T) {
	t.Parallel()
	fx := fixtureEntries(t, "fx")
	withAuth := "- id: gw\n  name: gateway\n  config:\n    auth: {tokens: {alice: GW_ALICE_TOKEN}}\n    policy: [{subjects: [alice], allow: [\"*\"]}]\n"
	const refused = "a reload cannot begin requiring one: restart serve to apply auth"
	for _, c := range []struct {
		name, start, says, not string
		serves                 bool
	}{
		{"a gateway entry before", fx + gatewayEntry("allow", `"mcp__fx__add"`), "(the gateway keeps the config it had)", "serves no call", true},
		{"no gateway entry before", fx, "(no gateway entry was in force, so the gateway serves no call until one loads, or this one is removed)", "keeps the config it had", false},
	} {
		s := startReloadedServeEnv(t, []string{"GW_ALICE_TOKEN=alice-secret"}, c.start)
		s.mustServe(t, c.name)
		s.reload(t, fx+withAuth, refused)
		log := s.p.stderr.String()
		if !strings.Contains(log, c.says) || strings.Contains(log, c.not) {
			t.Errorf("%s: the refusal does not say %q, or says %q:\n%s", c.name, c.says, c.not, log)
		}
		if c.serves {
			s.mustServe(t, c.name+", auth refused")
		} else {
			s.mustRefuse(t, c.name+", auth refused")
		}
	}
}

// A reload that brings a disabled gateway entry leaves the gateway serving
// no call, as one that disables a running entry does, and says so: it
// opened serve started without one to every call, unguarded.
func TestServeReloadDisabledGatewayEntryServesNoCall(t *testing.T) {
	t.Parallel()
	fx := fixtureEntries(t, "fx")
	disabled := strings.Replace(gatewayEntry("allow", `"mcp__fx__add"`), "  config:", "  disabled: true\n  config:", 1)
	for _, start := range []string{fx, fx + gatewayEntry("allow", `"mcp__fx__add"`)} {
		s := startReloadedServe(t, start)
		s.mustServe(t, "before the reload")
		s.reload(t, fx+disabled, "gateway entry disabled by the reload")
		// The warning comes as the reload is read; a gateway entry that
		// ran serves with its guards until the host has stopped it.
		mcptest.Eventually(t, 10*time.Second, func() bool {
			return strings.Contains(s.probe(t, "/healthz").body, "the gateway entry is disabled")
		}, "the disabled gateway entry to be applied")
		s.mustRefuse(t, "with the gateway entry disabled")
		s.mustProbe(t, "with the gateway entry disabled", false, "the gateway entry is disabled, so every call is refused")
	}
}

// A reload that removes auth from serve --http --console started with it
// is refused as one that adds it is: the gateway keeps the config it had,
// so alice's token still works, the log says to restart serve, and no
// console token signs in. It was applied: every request was refused
// with a 401 asking for a token (alice's too), and the console token,
// which serve printed at start though identities were configured, then
// signed in with every grant.
func TestServeReloadRemovingAuthIsRefused(t *testing.T) {
	t.Parallel()
	fx := fixtureEntries(t, "fx")
	const entry = "- id: gw\n  name: gateway\n  config:\n    %s\n    console: {allow: {subjects: [alice]}}\n    policy: [{allow: [\"*\"]}]\n"
	withAuth := fx + fmt.Sprintf(entry, "auth: {tokens: {alice: GW_ALICE_TOKEN}}")
	without := fx + fmt.Sprintf(entry, "rateLimit: {perIdentity: 100/s}")
	for _, chosen := range []string{"", "chosen-console-token"} {
		env := []string{"GW_ALICE_TOKEN=alice-secret", consoleTokenVar + "=" + chosen}
		cfg := writeConfig(t, withAuth)
		p := startServing(t, env, "serve", "--http", "127.0.0.1:0", "--console", "--config", cfg)
		s := &reloadedServe{p: p, cfg: cfg}
		s.reload(t, without, "a reload cannot stop requiring one")
		token := chosen
		if m := regexp.MustCompile(`the console token ([0-9a-f]+)`).FindStringSubmatch(p.stderr.String()); m != nil {
			t.Errorf("serve printed a console token, which does not sign in while identities are configured:\n%s", p.stderr)
			token = m[1]
		}
		if log := p.stderr.String(); !strings.Contains(log, "restart serve") || !strings.Contains(log, "(the gateway keeps the config it had)") {
			t.Errorf("the refusal does not say the gateway keeps its config and to restart serve:\n%s", log)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: p.url, HTTPClient: &http.Client{Transport: bearer{"alice-secret"}}}, nil)
		if err != nil {
			t.Fatalf("alice connects after the refused reload: %v\n%s", err, p.stderr)
		}
		if got, isErr := callText(t, cs, "mcp__fx__add", `{"a":1,"b":2}`); isErr || got != "3" {
			t.Errorf("alice's call after the refused reload: %q (error %v), want 3", got, isErr)
		}
		cs.Close()
		if token == "" {
			continue
		}
		req, _ := http.NewRequest(http.MethodPost, p.base()+"/console/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", p.base())
		if code, body := do(t, &http.Client{}, req); code != http.StatusUnauthorized {
			t.Errorf("the console token after the refused reload: %d %q, want 401", code, body)
		}
	}
}

// backend is one backend of a /healthz report.
type backend struct {
	Name  string `json:"name"`
	State string `json:"state"`
	OK    bool   `json:"ok"`
	Error string `json:"error"`
}

// backend is the backend name of /healthz now, and the report.
func (s *reloadedServe) backend(t *testing.T, name string) (backend, string) {
	t.Helper()
	p := s.probe(t, "/healthz")
	var h struct{ Backends []backend }
	if err := json.Unmarshal([]byte(p.body), &h); err != nil {
		t.Fatal(err)
	}
	for _, b := range h.Backends {
		if b.Name == name {
			return b, p.body
		}
	}
	t.Fatalf("/healthz has no backend %q: %s", name, p.body)
	return backend{}, ""
}

// refusedMetric is the line of /metrics that says whether server's
// config on disk is refused.
func (s *reloadedServe) refusedMetric(t *testing.T, server string) string {
	t.Helper()
	resp, err := s.client().Get(s.p.base() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	prefix := `mcpbridge_server_config_refused{server="` + server + `"} `
	for line := range strings.Lines(string(body)) {
		if strings.HasPrefix(line, prefix) {
			return strings.TrimSpace(line)
		}
	}
	return "no " + prefix + "line in /metrics"
}

// mustShowRefused fails unless /healthz says entry name's config on disk
// is refused (why, since when) while its previous config serves and
// /readyz stays 200, and the metric is 1 for it.
func (s *reloadedServe) mustShowRefused(t *testing.T, name, why string) {
	t.Helper()
	mcptest.Eventually(t, 30*time.Second, func() bool {
		b, _ := s.backend(t, name)
		return strings.Contains(b.Error, "config on disk is refused")
	}, "/healthz to report %s's config refused", name)
	b, body := s.backend(t, name)
	since := regexp.MustCompile(`since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ the config on disk is refused: .*previous config keeps running`)
	if !b.OK || b.State != "ready" || !since.MatchString(b.Error) || !strings.Contains(b.Error, why) {
		t.Errorf("with %s's config refused, /healthz %s; want it ready and ok, its error saying since when the config on disk is refused, and %q", name, body, why)
	}
	if p := s.probe(t, "/readyz"); p.status != http.StatusOK {
		t.Errorf("with %s's config refused, /readyz %d %s; want 200: the previous config serves", name, p.status, p.body)
	}
	if got, want := s.refusedMetric(t, name), `mcpbridge_server_config_refused{server="`+name+`"} 1`; got != want {
		t.Errorf("with %s's config refused, /metrics has %q; want %q", name, got, want)
	}
}

// mustShowApplied fails unless /healthz and the metric say entry name
// runs the config on disk.
func (s *reloadedServe) mustShowApplied(t *testing.T, name string) {
	t.Helper()
	mcptest.Eventually(t, 30*time.Second, func() bool {
		b, _ := s.backend(t, name)
		return b.OK && b.Error == ""
	}, "/healthz to report %s ready without an error", name)
	if got, want := s.refusedMetric(t, name), `mcpbridge_server_config_refused{server="`+name+`"} 0`; got != want {
		t.Errorf("with %s's config applied, /metrics has %q; want %q", name, got, want)
	}
}

// A reload that an entry refuses, its previous config kept running (a
// misspelt key in the gateway entry's policy, a server whose new command
// does not start), is shown where operators look: /healthz says for the
// entry that the config on disk is refused, why and since when, while
// /readyz stays 200, and mcpbridge_server_config_refused is 1 for it,
// until a reload applies the entry. Before, only the log said so: the
// entry read ready with no error and no metric moved.
func TestServeReloadRefusedConfigIsShown(t *testing.T) {
	t.Parallel()
	fx := fixtureEntries(t, "fx")
	good := fx + gatewayEntry("allow", `"mcp__fx__add"`)
	s := startReloadedServe(t, good)
	s.mustServe(t, "with the gateway entry")
	s.mustShowApplied(t, "gateway")

	s.reload(t, fx+gatewayEntry("alow", `"*"`), `msg="the new config did not start, the previous config keeps running" entry=gw`)
	s.mustServe(t, "with the gateway entry misspelt")
	s.mustShowRefused(t, "gateway", "config.policy[0].alow: unknown key")

	s.reload(t, good, "config file changed")
	s.mustShowApplied(t, "gateway")

	broken := regexp.MustCompile(`(?m)^    command: .*$`).ReplaceAllString(fx, "    command: "+filepath.Join(t.TempDir(), "missing-server"))
	s.reload(t, broken+gatewayEntry("allow", `"mcp__fx__add"`), `msg="the new config did not start, the previous config keeps running" entry=fx`)
	s.mustServe(t, "with the server's new command missing")
	s.mustShowRefused(t, "fx", "missing-server")
	s.mustShowApplied(t, "gateway")
}

// Under --token-env, a reload that adds to serve started without a
// gateway entry one that does not load (misspelt, disabled, an audit file
// that cannot be opened) fails closed with the guards serve had: the
// token still opens sessions, and every call is refused, the refusal and
// the probes saying why. A reload that breaks an entry in force keeps its
// config, serving as before. Every request was answered 503 "the gateway
// is starting" with Retry-After, as if the entry were about to load,
// though none would until the file changed.
func TestServeTokenReloadUnloadableGatewayEntrySaysWhy(t *testing.T) {
	t.Parallel()
	fx := fixtureEntries(t, "fx")
	disabled := strings.Replace(gatewayEntry("allow", `"mcp__fx__add"`), "  config:", "  disabled: true\n  config:", 1)
	unapplied := gatewayEntry("allow", `"*"`) + "    audit: {file: " + filepath.Join(t.TempDir(), "missing", "audit.jsonl") + "}\n"
	for _, c := range []struct{ name, entry, logged, why string }{
		{"misspelt", gatewayEntry("alow", `"*"`), `msg="failed to start" entry=gw`, "(it is invalid"},
		{"disabled", disabled, "gateway entry disabled by the reload", "(it is disabled"},
		{"audit file missing", unapplied, `msg="failed to start" entry=gw`, "(it could not be applied"},
	} {
		s := startReloadedServeToken(t, fx)
		s.mustServe(t, c.name+", before the reload")
		s.reload(t, fx+c.entry, c.logged)
		got, err := s.call(t, "mcp__fx__add")
		if err == nil || !strings.Contains(err.Error(), "gateway entry is not in force "+c.why) {
			t.Errorf("%s gateway entry added: mcp__fx__add answered %q, %v; want it refused, saying %q", c.name, got, err, c.why)
		}
		s.connect(t).Close() // the token still opens a session
		p := s.probe(t, "/readyz")
		if p.status != http.StatusServiceUnavailable || !strings.Contains(p.health.Refusing, c.why) || strings.Contains(p.body, "the gateway is starting") {
			t.Errorf("%s gateway entry added: /readyz %d %s; want 503, refusing %q, not starting", c.name, p.status, p.body, c.why)
		}
	}

	asBearer := func(entry string) string { return strings.Replace(entry, "anonymous", "bearer", 1) } // --token-env's caller
	s := startReloadedServeToken(t, fx+asBearer(gatewayEntry("allow", `"mcp__fx__add"`)))
	s.mustServe(t, "with the gateway entry")
	s.reload(t, fx+asBearer(gatewayEntry("alow", `"*"`)), `msg="the new config did not start, the previous config keeps running" entry=gw`)
	s.mustServe(t, "with the gateway entry misspelt")
	if p := s.probe(t, "/readyz"); p.status != http.StatusOK {
		t.Errorf("with the gateway entry misspelt and its config kept, /readyz %d %s; want 200", p.status, p.body)
	}
}
