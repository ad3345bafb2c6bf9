package console_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/audit"
	"github.com/mcpbridge/mcpbridge/internal/console"
	"github.com/mcpbridge/mcpbridge/internal/gatewayauth"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// browser is the one headless Chromium the test binary shares; each test
// has a browser context of its own (its own cookies).
var browser struct {
	ctx    context.Context
	err    error
	cancel func()
}

func TestMain(m *testing.M) {
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel()
	}
	os.Exit(code)
}

var startBrowser sync.Once

// newTab returns a tab in a fresh browser context. Without chromium the
// test skips, and fails under CI=true, where it must be installed
// (scripts/install-chromium.sh, run by make deps).
func newTab(t *testing.T) context.Context {
	t.Helper()
	startBrowser.Do(func() {
		path, err := exec.LookPath("chromium")
		if err != nil {
			browser.err = fmt.Errorf("chromium is not installed (run scripts/install-chromium.sh): %w", err)
			return
		}
		opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
			chromedp.WindowSize(1280, 800), chromedp.Flag("disable-gpu", true))
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancelCtx := chromedp.NewContext(alloc)
		if err := chromedp.Do(ctx); err != nil {
			browser.err = fmt.Errorf("starting chromium: %w", err)
		}
		browser.ctx, browser.cancel = ctx, func() { cancelCtx(); cancelAlloc() }
	})
	if browser.err != nil {
		mcptest.Unavailable(t, browser.err.Error())
	}
	ctx, cancel := chromedp.NewContext(browser.ctx, chromedp.WithNewBrowserContext())
	ctx, cancelTimeout := context.WithTimeout(ctx, 30*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancel() })
	return ctx
}

// Tokens of the test's identities: alice and bob are granted the console
// and trying tools, bob's policy denies get-sum, carol may only look, eve
// is granted nothing.
const (
	carolToken = "carol-token-0123456789"
	aliceToken = "alice-token-0123456789"
	bobToken   = "bob-token-0123456789"
	eveToken   = "eve-token-0123456789"
)

// hostile is a tool description that tries to run script, load an image
// and reverse the text around it.
const hostile = `<script>document.title="pwned"</script><img src=x onerror="document.title='pwned'"> harmless` + "\u202Eexe.txt"

// hostileSchema is a schema whose property, its description and an
// enum option reverse the text around them too.
const hostileSchema = `{"type":"object","properties":{"file` + "\u202E" + `":{"type":"string","description":"the file` + "\u202E" + `exe.txt"},` +
	`"kind":{"enum":["plain","rev` + "\u202E" + `txt.exe"]}}}`

// fixture is a gateway with server-everything, a tool of hostile
// description, identities, a policy and an audit trail, with its console.
type fixture struct {
	URL    string
	audit  string
	mu     sync.Mutex
	status []host.Status
	every  *mcpclient.Server
	reg    *tool.Registry
	keeper *gatewayauth.Keeper
	// managed lists the restarts and reloads asked for: "entry action".
	managed []string
	tracker *console.Tracker
	rates   *console.Rates
	// gateways serve the registry behind the tracker: the fixture's, and
	// any a test adds (serveStateless).
	gateways []*gateway.Gateway
	// pinNotes and scan are everything's, as the host would report them.
	pinNotes []string
	scan     *host.ScanReport
}

// parked is the console's Options.Parked: the calls parked on each of the
// fixture's gateways.
func (f *fixture) parked(key any) []gateway.ParkedCall {
	f.mu.Lock()
	gws := slices.Clone(f.gateways)
	f.mu.Unlock()
	var out []gateway.ParkedCall
	for _, g := range gws {
		out = append(out, g.ParkedCalls(key)...)
	}
	return out
}

// serveStateless serves the fixture's registry on a stateless gateway of
// its own, behind the same tracker and identities (a replica, as serve
// --stateless runs): its 2026-07-28 clients are asked through
// input-required results, so their calls park.
func (f *fixture) serveStateless(t *testing.T) string {
	opts := gateway.Options{Stateless: true, Gate: f.tracker, Authenticate: f.keeper.Authenticate, CallContext: f.tracker.CallContext(nil)}
	g := gateway.New(f.reg, opts)
	t.Cleanup(func() { g.Close() })
	ts := httptest.NewServer(g.Handler())
	t.Cleanup(ts.Close)
	f.mu.Lock()
	f.gateways = append(f.gateways, g)
	f.mu.Unlock()
	return ts.URL
}

// manage records a restart or reload; the host's own (host.Restart,
// host.ApplyEntry) are tested in package host.
func (f *fixture) manage(_ context.Context, entry, action string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.managed = append(f.managed, entry+" "+action)
	return nil
}

func (f *fixture) takeManaged() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.managed
	f.managed = nil
	return out
}

// apply puts a gateway entry's config in force, as a reload does.
func (f *fixture) apply(t *testing.T, config string) {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(config), &n); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ALICE": aliceToken, "BOB": bobToken, "CAROL": carolToken, "EVE": eveToken}
	cfg, err := gatewayauth.Decode(n.Content[0], func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	if err := f.keeper.Apply(t.Context(), cfg, f.reg); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) statuses() []host.Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.every.Status()
	return append([]host.Status{{ID: "everything", Name: "everything", Plugin: "mcp-client", State: host.State(st.State), Err: st.Err,
		Transport: st.Transport, ProtocolVersion: st.ProtocolVersion, Tools: st.Tools, Connect: st.Connect, Discover: st.Discover,
		PeerName: st.PeerName, PeerVersion: st.PeerVersion, PinNotes: f.pinNotes, Scan: f.scan}}, f.status...)
}

const gatewayConfig = `
auth:
  tokens: {alice: ALICE, bob: BOB, carol: CAROL, eve: EVE}
policy:
  - subjects: [alice, carol, eve]
    allow: ["*"]
  - subjects: [bob]
    allow: ["*"]
    deny: ["*get-sum*"]
audit:
  file: %s
console:
  allow: {subjects: [alice, bob, carol]}
  tryIt: {subjects: [alice, bob]}
  manage: {subjects: [alice]}
`

func newFixture(t *testing.T) *fixture {
	t.Helper()
	everything := mcptest.ThirdPartyBin(t, "mcp-server-everything")
	reg := tool.NewRegistry()
	f := &fixture{audit: filepath.Join(t.TempDir(), "audit.jsonl")}
	srv, err := mcpclient.Start(mcpclient.Config{ServerName: "everything", Transport: mcpclient.TransportStdio, Command: everything, Args: []string{"stdio"}},
		mcpclient.Options{Registry: reg, Elicit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := srv.WaitReady(ctx); err != nil {
		t.Fatalf("server-everything did not start: %v", err)
	}
	f.every, f.reg = srv, reg
	if _, err := reg.Register(tool.Tool{Name: "hostile", Description: hostile, InputSchema: []byte(hostileSchema),
		OutputSchema: []byte(hostileSchema), Annotations: []byte(`{"title":"note` + "\u202E" + `txt.exe"}`),
		Execute: func(context.Context, json.RawMessage) (tool.Output, error) {
			return tool.Output{Content: []tool.Content{tool.Text(hostile)}}, nil
		}}); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Register(tool.Tool{Name: "flaky", Description: "Always fails.", InputSchema: []byte(`{"type":"object"}`),
		Execute: func(context.Context, json.RawMessage) (tool.Output, error) {
			return tool.Output{}, errors.New("flaky failed")
		}}); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Register(tool.Tool{Name: "iconic", Description: "Has icons.", InputSchema: []byte(`{"type":"object"}`),
		Icons:   []tool.Icon{{Src: "data:image/png;base64," + tinyPNG}, {Src: svgIcon}, {Src: "https://icons.example/tracker.png"}},
		Execute: func(context.Context, json.RawMessage) (tool.Output, error) { return tool.Output{}, nil }}); err != nil {
		t.Fatal(err)
	}
	keeper := gatewayauth.NewKeeper(gatewayauth.Options{})
	f.keeper = keeper
	f.apply(t, fmt.Sprintf(gatewayConfig, f.audit))
	t.Cleanup(func() { keeper.Clear(keeper.Current()) })
	tracker := console.NewTracker(keeper, nil)
	rates := console.NewRates(nil, nil)
	var handler http.Handler
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(ts.Close)
	con, err := console.New(console.Options{Status: f.statuses, Registry: reg, Access: keeper, MCPURL: func() string { return ts.URL + "/mcp" }, Traffic: tracker, Poll: 50 * time.Millisecond, Manage: f.manage, Rates: rates, Parked: f.parked})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(con.Close)
	f.tracker, f.rates = tracker, rates
	gw := gateway.New(reg, gateway.Options{Gate: tracker, Authenticate: keeper.Authenticate, Console: con, Observer: rates,
		CallContext: tracker.CallContext(nil)})
	t.Cleanup(func() { gw.Close() })
	handler = gw.Handler()
	f.gateways = []*gateway.Gateway{gw}
	f.URL = ts.URL
	return f
}

// click clicks the element of id and waits for the page it loads.
func click(t *testing.T, ctx context.Context, id string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.ID(id)))); err != nil {
		t.Fatalf("clicking #%s: %v", id, err)
	}
}

func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

func text(t *testing.T, ctx context.Context, css string) string {
	t.Helper()
	var s string
	var err error
	// The page's live updates replace the servers' rows: a node found
	// may be gone when its text is read, and is read again as it is now.
	for range 5 {
		if s, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(css))); err == nil || !strings.Contains(err.Error(), "No node with given id found") {
			break
		}
	}
	if err != nil {
		t.Fatalf("reading %s: %v", css, err)
	}
	return s
}

// signIn signs in with token and returns the page's text.
func signIn(t *testing.T, ctx context.Context, base, token string) string {
	t.Helper()
	do(t, ctx, chromedp.Navigate(base+"/console/login"), chromedp.WaitVisible(chromedp.ID("token")), chromedp.SendKeys(chromedp.ID("token"), token))
	click(t, ctx, "signin")
	return text(t, ctx, "body")
}

func TestLoginRefusedAndAllowed(t *testing.T) {
	f := newFixture(t)
	ctx := newTab(t)
	for _, tc := range []struct{ token, want string }{
		{"not-a-token", "Sign-in refused"},
		{eveToken, "not granted the console"},
	} {
		if body := signIn(t, ctx, f.URL, tc.token); !strings.Contains(body, tc.want) {
			t.Errorf("signing in with %q: the page says %q, want %q", tc.token, body, tc.want)
		}
	}
	body := signIn(t, ctx, f.URL, aliceToken)
	if !strings.Contains(body, "Servers") || !strings.Contains(body, "everything") || !strings.Contains(body, "alice") {
		t.Errorf("signed in as alice, the page says %q, want the servers page", body)
	}
}

// A server going down shows on the open servers page within 2 s, without
// a reload.
func TestServerDownShowsLive(t *testing.T) {
	f := newFixture(t)
	ctx := newTab(t)
	signIn(t, ctx, f.URL, aliceToken)
	row := `tr[data-server="everything"] .state`
	if got := text(t, ctx, row); got != "ready" {
		t.Fatalf("everything's state is %q, want ready", got)
	}
	f.every.Close()
	down, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := chromedp.Do(down, chromedp.WaitVisible(chromedp.CSS(`tr[data-server="everything"].state-closed`))); err != nil {
		t.Fatalf("the page did not show everything closed within 2 s (it says %q): %v", text(t, ctx, row), err)
	}
}

// tryIt opens a tool's page, fills its form and calls it.
func tryIt(t *testing.T, ctx context.Context, base, name string, args map[string]string) string {
	t.Helper()
	do(t, ctx, chromedp.Navigate(base+"/console/tools/"+name))
	if body := text(t, ctx, "main"); !strings.Contains(body, "Try it") {
		t.Fatalf("%s's page has no try-it form: %q", name, body)
	}
	for k, v := range args {
		do(t, ctx, chromedp.SendKeys(chromedp.ID("arg-"+k), v))
	}
	click(t, ctx, "call")
	return text(t, ctx, "main")
}

func getSum(t *testing.T, f *fixture) string { return f.tool(t, "get-sum") }

// tool is the public name of server-everything's tool raw.
func (f *fixture) tool(t *testing.T, raw string) string {
	t.Helper()
	for _, tt := range f.reg.List() {
		if tt.Origin.Name == raw {
			return tt.Name
		}
	}
	t.Fatalf("server-everything has no %s tool", raw)
	return ""
}

func TestTryGetSum(t *testing.T) {
	f := newFixture(t)
	ctx := newTab(t)
	signIn(t, ctx, f.URL, aliceToken)
	got := tryIt(t, ctx, f.URL, getSum(t, f), map[string]string{"a": "2", "b": "40"})
	if !strings.Contains(got, "The sum of 2 and 40 is 42.") || strings.Contains(got, "Refused") {
		t.Errorf("get-sum 2 + 40: the page says %q, want 42", got)
	}
}

// tryHidden posts a try-it of a tool the viewer's console does not offer
// (the policy hides it), as a viewer who knows its name would, from the
// tools page with its CSRF token, and returns the page's text.
func tryHidden(t *testing.T, ctx context.Context, base, name string, fields ...[2]string) string {
	t.Helper()
	do(t, ctx, chromedp.Navigate(base+"/console/tools"), chromedp.WaitVisible(chromedp.CSS("main h1")))
	forgePost(t, ctx, "/console/tools/"+name, fields...)
	return text(t, ctx, "main")
}

// A try-it the policy denies (of a tool hidden from the viewer, posted
// by one who knows its name) shows the denial, and the audit trail gains
// a denied line for the viewer.
func TestTryDeniedIsAudited(t *testing.T) {
	f := newFixture(t)
	ctx := newTab(t)
	signIn(t, ctx, f.URL, bobToken)
	got := tryHidden(t, ctx, f.URL, getSum(t, f), [2]string{"arg.a", "1"}, [2]string{"arg.b", "1"})
	if !strings.Contains(got, "Refused") {
		t.Errorf("bob's get-sum: the page says %q, want the refusal", got)
	}
	trail, _ := os.ReadFile(f.audit)
	if !strings.Contains(string(trail), `"identity":"bob"`) || !strings.Contains(string(trail), `"outcome":"denied"`) {
		t.Errorf("the audit trail has no denied line for bob:\n%s", trail)
	}
}

func TestAuditFilter(t *testing.T) {
	f := newFixture(t)
	ctx := newTab(t)
	signIn(t, ctx, f.URL, bobToken)
	tryHidden(t, ctx, f.URL, getSum(t, f), [2]string{"arg.a", "1"}, [2]string{"arg.b", "1"})
	signIn(t, ctx, f.URL, aliceToken)
	tryIt(t, ctx, f.URL, getSum(t, f), map[string]string{"a": "1", "b": "2"})
	do(t, ctx, chromedp.Navigate(f.URL+"/console/audit"), chromedp.WaitVisible(chromedp.ID("audit-filter")))
	if got := text(t, ctx, "#matched"); got != "2" {
		t.Errorf("unfiltered, %s entries match, want 2", got)
	}
	if got := text(t, ctx, "#chain"); !strings.Contains(got, "chain holds") {
		t.Errorf("the chain's state says %q, want it holds", got)
	}
	do(t, ctx, chromedp.SendKeys(chromedp.ID("f-identity"), "bob"))
	click(t, ctx, "filter")
	table := text(t, ctx, "#audit tbody")
	if got := text(t, ctx, "#matched"); got != "1" || !strings.Contains(table, "denied") || strings.Contains(table, "alice") {
		t.Errorf("filtered by bob: %s match, table %q; want bob's one denied line", got, table)
	}
}

// A tool description with script, an image that runs script and a bidi
// override renders as text: no script runs, no image loads, and the
// override is shown as a code.
func TestHostileDescriptionInert(t *testing.T) {
	f := newFixture(t)
	ctx := newTab(t)
	signIn(t, ctx, f.URL, aliceToken)
	for _, path := range []string{"/console/tools", "/console/tools/hostile", "/console/tools?q=harmless"} {
		do(t, ctx, chromedp.Navigate(f.URL+path), chromedp.WaitVisible(chromedp.CSS("main")))
		title, err := chromedp.Run(ctx, chromedp.Title())
		if err != nil {
			t.Fatal(err)
		}
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("main script, main img").length`))
		if err != nil {
			t.Fatal(err)
		}
		body := text(t, ctx, "main")
		if strings.Contains(title, "pwned") || n != 0 || !strings.Contains(body, "<script>") || !strings.Contains(body, "⟨U+202E⟩") || strings.ContainsRune(body, 0x202E) {
			t.Errorf("%s: title %q, %d script or img elements, text %q; want the description as inert text", path, title, n, body)
		}
	}
	// The hostile tool's schema, its form's fields, options and
	// annotations, and what a call of it returns; a peer's name, version
	// and error; a client's name on the traffic page.
	hasCodes := func(what, body string) {
		t.Helper()
		if !strings.Contains(body, "⟨U+202E⟩") || strings.ContainsRune(body, 0x202E) {
			t.Errorf("%s: %q, want each U+202E shown as ⟨U+202E⟩", what, body)
		}
	}
	do(t, ctx, chromedp.Navigate(f.URL+"/console/tools/hostile"), chromedp.WaitVisible(chromedp.ID("tryit")))
	for _, css := range []string{"#schema", "#output", "#annotations", "#tryit"} {
		hasCodes("the hostile tool's "+css, text(t, ctx, css))
	}
	if v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("select option:last-child").value`)); err != nil || v != "rev\u202Etxt.exe" {
		t.Errorf("the hostile enum option's value is %q (%v), want it as the schema has it", v, err)
	}
	hasCodes("the hostile tool's result", tryIt(t, ctx, f.URL, "hostile", nil))
	f.mu.Lock()
	f.status = []host.Status{{ID: "mirror", Name: "mirror", Plugin: "mcp-client", State: host.StateFailed,
		PeerName: "peer\u202Eeman", PeerVersion: "1\u202E2", Err: "down\u202Enwod"}}
	f.mu.Unlock()
	for _, path := range []string{"/console", "/console/servers/mirror"} {
		do(t, ctx, chromedp.Navigate(f.URL+path), chromedp.WaitVisible(chromedp.CSS("main h1")))
		hasCodes(path, text(t, ctx, "main"))
	}
	_, end, err := f.tracker.Enter(context.Background(), gateway.Call{Tool: "flaky", Public: "flaky",
		Header: http.Header{"Authorization": {"Bearer " + aliceToken}}, Client: "client\u202Etneilc"})
	if err != nil {
		t.Fatal(err)
	}
	defer end(gateway.Outcome{})
	do(t, ctx, chromedp.Navigate(f.URL+"/console/traffic"), chromedp.WaitVisible(chromedp.ID("calls")))
	hasCodes("the traffic page", text(t, ctx, "main"))
}

// A form posted from another origin (another port on the same loopback
// host, same site for the cookie) is refused, and calls nothing.
func TestCrossSiteFormRefused(t *testing.T) {
	f := newFixture(t)
	ctx := newTab(t)
	signIn(t, ctx, f.URL, aliceToken)
	name := getSum(t, f)
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<form id="f" method="post" action="%s/console/tools/%s"><input name="arg.a" value="1"><input name="arg.b" value="2"><input name="csrf" value="guess"><button id="go">win a prize</button></form>`, f.URL, name)
	}))
	defer evil.Close()
	do(t, ctx, chromedp.Navigate(evil.URL))
	click(t, ctx, "go")
	body := text(t, ctx, "body")
	if !strings.Contains(body, "cross-site request refused") {
		t.Errorf("the cross-site form got %q, want it refused", body)
	}
	if trail, _ := os.ReadFile(f.audit); len(trail) != 0 {
		t.Errorf("the cross-site form called the tool:\n%s", trail)
	}
}

// A tool that returns an image shows it, from a data: URL the page's CSP
// allows.
// tinyPNG is a 1×1 PNG, base64; svgIcon an SVG icon that would run script
// if it were ever loaded as a document.
const (
	tinyPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
	svgIcon = `data:image/svg+xml,<svg xmlns="http://www.w3.org/2000/svg" onload="document.title='pwned'"/>`
)

// A tool's icons: a data: raster image is shown; an SVG is not; an
// https: icon is named but never fetched (the CSP would refuse it, and
// the page does not ask).
func TestToolIcons(t *testing.T) {
	f := newFixture(t)
	ctx := newTab(t)
	signIn(t, ctx, f.URL, aliceToken)
	do(t, ctx, chromedp.Navigate(f.URL+"/console/tools/iconic"), chromedp.WaitVisible(chromedp.CSS("#icons")))
	srcs, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("main img")].filter(i => i.complete && i.naturalWidth > 0).map(i => i.src)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) != 1 || srcs[0] != "data:image/png;base64,"+tinyPNG {
		t.Errorf("loaded images %q; want only the PNG icon", srcs)
	}
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("main img").length`))
	if err != nil || n != 1 {
		t.Errorf("%d img elements (%v); want 1: neither the SVG nor the https icon is an image", n, err)
	}
	if body := text(t, ctx, "#icons"); !strings.Contains(body, "https://icons.example/tracker.png") {
		t.Errorf("icons say %q; want the https icon named", body)
	}
}

func TestTryImage(t *testing.T) {
	f := newFixture(t)
	ctx := newTab(t)
	signIn(t, ctx, f.URL, aliceToken)
	tryIt(t, ctx, f.URL, f.tool(t, "get-tiny-image"), nil)
	loaded, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const i = document.querySelector("#result img"); return !!i && i.complete && i.naturalWidth > 0 && i.src.startsWith("data:image/png;base64,") })()`))
	if err != nil || !loaded {
		t.Errorf("get-tiny-image: the result shows no loaded image (%v); the page says %q", err, text(t, ctx, "main"))
	}
}

// A viewer granted the console but not tryIt gets no form, and a form
// built on the console's own page with a valid CSRF token is still
// refused, calling nothing.
func TestTryItNeedsItsGrant(t *testing.T) {
	f := newFixture(t)
	ctx := newTab(t)
	signIn(t, ctx, f.URL, carolToken)
	name := getSum(t, f)
	do(t, ctx, chromedp.Navigate(f.URL+"/console/tools/"+name))
	if body := text(t, ctx, "main"); strings.Contains(body, "Try it") || !strings.Contains(body, "needs the console.tryIt grant") {
		t.Errorf("carol's page of %s: %q, want no try-it form", name, body)
	}
	forgePost(t, ctx, "/console/tools/"+name, [2]string{"arg.a", "1"}, [2]string{"arg.b", "2"})
	if body := text(t, ctx, "main"); !strings.Contains(body, "not granted to carol") {
		t.Errorf("carol's forged try-it: %q, want it refused", body)
	}
	if trail, _ := os.ReadFile(f.audit); len(trail) != 0 {
		t.Errorf("carol's forged try-it called the tool:\n%s", trail)
	}
}

// A call in flight shows on the traffic page with its identity and tool.
func TestTrafficShowsCallInFlight(t *testing.T) {
	f := newFixture(t)
	caller := newTab(t)
	signIn(t, caller, f.URL, aliceToken)
	name := f.tool(t, "trigger-long-running-operation")
	do(t, caller, chromedp.Navigate(f.URL+"/console/tools/"+name), chromedp.SendKeys(chromedp.ID("arg-duration"), "30"), chromedp.SendKeys(chromedp.ID("arg-steps"), "30"))
	calling := make(chan error, 1)
	go func() {
		_, err := chromedp.Run(caller, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.ID("call"))))
		calling <- err
	}()
	watcher := newTab(t)
	signIn(t, watcher, f.URL, aliceToken)
	var body string
	mcptest.Eventually(t, 20*time.Second, func() bool {
		do(t, watcher, chromedp.Navigate(f.URL+"/console/traffic"))
		body = text(t, watcher, "main")
		return strings.Contains(body, name)
	}, "the call on the traffic page")
	if !strings.Contains(body, "alice") {
		t.Errorf("the traffic page says %q, want alice's call of %s", body, name)
	}
	f.every.Close() // ends the call
	if err := <-calling; err != nil {
		t.Fatal(err)
	}
}

// A reload that takes a viewer out of console.allow ends their sign-in at
// their next request.
func TestRevokedGrantEndsSignIn(t *testing.T) {
	f := newFixture(t)
	ctx := newTab(t)
	signIn(t, ctx, f.URL, aliceToken)
	f.apply(t, strings.Replace(fmt.Sprintf(gatewayConfig, f.audit), "allow: {subjects: [alice, bob, carol]}", "allow: {subjects: [bob]}", 1))
	do(t, ctx, chromedp.Navigate(f.URL+"/console/tools"))
	if body := text(t, ctx, "main"); !strings.Contains(body, "Sign in") || strings.Contains(body, "get-sum") {
		t.Errorf("after alice's grant was revoked, /console/tools says %q, want the sign-in page", body)
	}
}

// forgePost submits, from the console's own page, a form to path with the
// page's valid CSRF token and fields, and waits for the answer.
func forgePost(t *testing.T, ctx context.Context, path string, fields ...[2]string) {
	t.Helper()
	pairs, _ := json.Marshal(append([][2]string{}, fields...))
	forge := fmt.Sprintf(`(() => { const f = document.createElement("form"); f.method = "post"; f.action = %q;
		for (const [k, v] of [["csrf", document.querySelector("input[name=csrf]").value], ...%s]) {
			const i = document.createElement("input"); i.name = k; i.value = v; f.appendChild(i) }
		document.body.appendChild(f); f.submit(); return true })()`, path, pairs)
	if _, err := chromedp.Run(ctx, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Evaluate[bool](forge))); err != nil {
		t.Fatal(err)
	}
}

// A viewer granted console.manage restarts an entry from its page, and
// the trail records it; one not granted sees no button, and a form forged
// on the console's own page with a valid CSRF token is refused (403),
// restarts nothing and is recorded as denied.
func TestRestartNeedsItsGrant(t *testing.T) {
	f := newFixture(t)
	ctx := newTab(t)
	signIn(t, ctx, f.URL, aliceToken)
	do(t, ctx, chromedp.Navigate(f.URL+"/console/servers/everything"), chromedp.WaitVisible(chromedp.ID("restart")))
	click(t, ctx, "restart")
	if got := text(t, ctx, "main"); !strings.Contains(got, "everything: restarted") {
		t.Errorf("after alice's restart the page says %q, want it restarted", got)
	}
	if got := f.takeManaged(); !slices.Equal(got, []string{"everything restart"}) {
		t.Errorf("alice's restart asked for %q, want everything restart", got)
	}
	signIn(t, ctx, f.URL, bobToken)
	do(t, ctx, chromedp.Navigate(f.URL+"/console/servers/everything"), chromedp.WaitVisible(chromedp.ID("state")))
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#restart, #reload").length`)); err != nil || n != 0 {
		t.Errorf("bob's page of everything has %d restart or reload buttons (%v), want none", n, err)
	}
	statuses := make(chan int64, 8)
	if err := chromedp.Listen(ctx, func(ev any) {
		if r, ok := ev.(*network.EventResponseReceived); ok && strings.HasSuffix(r.Response.URL, "/reload") {
			select {
			case statuses <- r.Response.Status:
			default:
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	forgePost(t, ctx, "/console/servers/everything/reload")
	status := <-statuses
	if body := text(t, ctx, "main"); !strings.Contains(body, "not granted to bob") || status != http.StatusForbidden {
		t.Errorf("bob's forged reload: %d %q, want 403 and it refused", status, body)
	}
	if got := f.takeManaged(); len(got) != 0 {
		t.Errorf("bob's forged reload asked for %q, want nothing", got)
	}
	trail, _ := os.ReadFile(f.audit)
	for _, want := range []string{
		`"identity":"alice","method":"console/restart","name":"everything","outcome":"ok"`,
		`"identity":"bob","method":"console/reload","name":"everything","outcome":"denied"`,
	} {
		if !strings.Contains(string(trail), want) {
			t.Errorf("the audit trail has no line with %s:\n%s", want, trail)
		}
	}
}

// The traffic page charts each tool's last hour: calls a minute, error
// rate and latency percentiles, drawn as inline SVG the strict CSP lets
// render.
func TestTrafficCharts(t *testing.T) {
	f := newFixture(t)
	ctx := newTab(t)
	signIn(t, ctx, f.URL, aliceToken)
	sum := getSum(t, f)
	tryIt(t, ctx, f.URL, sum, map[string]string{"a": "1", "b": "2"})
	tryIt(t, ctx, f.URL, sum, map[string]string{"a": "3", "b": "4"})
	tryIt(t, ctx, f.URL, "flaky", nil)
	do(t, ctx, chromedp.Navigate(f.URL+"/console/traffic"), chromedp.WaitVisible(chromedp.ID("charts")))
	row := func(tool, css string) string {
		return text(t, ctx, fmt.Sprintf(`#charts tr[data-tool=%q] %s`, tool, css))
	}
	if got := row(sum, ".calls-total"); got != "2 calls" {
		t.Errorf("%s's calls: %q, want 2 calls", sum, got)
	}
	if got := row(sum, ".error-rate"); !strings.HasPrefix(got, "0 % errors") {
		t.Errorf("%s's errors: %q, want none", sum, got)
	}
	if got := row("flaky", ".error-rate"); !strings.HasPrefix(got, "100 % errors (1)") {
		t.Errorf("flaky's errors: %q, want 100 %%", got)
	}
	if got := row(sum, ".latency"); !strings.Contains(got, "p50 ") || strings.Contains(got, "–") {
		t.Errorf("%s's latency: %q, want its percentiles", sum, got)
	}
	// The bars and lines are drawn: sized, coloured by the console's own
	// stylesheet (no inline style, which the CSP refuses).
	drawn, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`(() => {
		const r = document.querySelector('#charts tr[data-tool=%q]');
		const bar = r.querySelector('rect.calls'), err = document.querySelector('#charts tr[data-tool="flaky"] rect.errors'), line = r.querySelector('polyline.p95');
		return bar.getBBox().height > 0 && err.getBBox().height > 0 && line.points.length > 0 && getComputedStyle(bar).fill !== getComputedStyle(err).fill })()`, sum)))
	if err != nil || !drawn {
		t.Errorf("the charts are not drawn (%v): %q", err, text(t, ctx, "#charts"))
	}
}

// post sends one JSON-RPC message to the gateway's MCP endpoint as
// token's holder and returns the session id and the answer's body.
func post(t *testing.T, base, token, session, msg string) (string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(msg))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("POST %s: %s %s", msg, resp.Status, body)
	}
	return resp.Header.Get("Mcp-Session-Id"), string(body)
}

// A call run as a task and a call parked for its client's answers show on
// the traffic page apart from plain calls: who, which tool, status, age.
func TestTrafficTasksAndParked(t *testing.T) {
	f := newFixture(t)
	// bob's client (2026-07-28, stateless) is asked a question, and
	// answers only when the test lets it: meanwhile its call is parked.
	asked, answer := make(chan struct{}, 1), make(chan struct{})
	defer close(answer)
	client := mcp.NewClient(&mcp.Implementation{Name: "asker", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- struct{}{}
			select {
			case <-answer:
			case <-ctx.Done():
			}
			return &mcp.ElicitResult{Action: "decline"}, nil
		}})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: f.serveStateless(t) + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Transport: bearer(bobToken)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	elicit := f.tool(t, "trigger-elicitation-request")
	called := make(chan error, 1)
	go func() {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: elicit, Arguments: map[string]any{}})
		if err == nil {
			if b, _ := json.Marshal(res.Content); !strings.Contains(string(b), "declined") {
				err = fmt.Errorf("the result says %s, want bob's answer (declined)", b)
			}
		}
		called <- err
	}()
	select {
	case <-asked:
	case err := <-called:
		t.Fatalf("%s ended without asking: %v", elicit, err)
	}
	// Then alice runs a long operation as a task (protocol 2025-11-25):
	// after bob's question, which the backend could not tell from the
	// task's while both ran.
	session, _ := post(t, f.URL, aliceToken, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"tasker","version":"1"}}}`)
	post(t, f.URL, aliceToken, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	long := f.tool(t, "trigger-long-running-operation")
	if _, body := post(t, f.URL, aliceToken, session, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":%q,"arguments":{"duration":30,"steps":30},"task":{"ttl":60000}}}`, long)); !strings.Contains(body, "taskId") {
		t.Fatalf("the call as a task: %s, want a task", body)
	}
	ctx := newTab(t)
	signIn(t, ctx, f.URL, aliceToken)
	do(t, ctx, chromedp.Navigate(f.URL+"/console/traffic"), chromedp.WaitVisible(chromedp.ID("parked")))
	tasks, parked := text(t, ctx, "#tasks tbody"), text(t, ctx, "#parked tbody")
	if !strings.Contains(tasks, "alice") || !strings.Contains(tasks, long) || !strings.Contains(tasks, "working") {
		t.Errorf("the tasks table says %q, want alice's %s working", tasks, long)
	}
	if !strings.Contains(parked, "bob") || !strings.Contains(parked, elicit) || !strings.Contains(parked, "input required: 1 question for the client") {
		t.Errorf("the parked table says %q, want bob's %s waiting for one answer", parked, elicit)
	}
	if calls := text(t, ctx, "main"); strings.Contains(calls, "No call waits") || strings.Contains(calls, "No task running") {
		t.Errorf("the traffic page says %q", calls)
	}
	answer <- struct{}{}
	if err := <-called; err != nil {
		t.Errorf("bob's call after its answer: %v", err)
	}
}

// bearer sends a bearer token on every request.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// The audit page shows a page of matches, newest first, and its Older
// link goes on from there with the same filter, to the trail's start.
func TestAuditOlderPages(t *testing.T) {
	f := newFixture(t)
	// The trail has one writer: the gateway entry's is let go of while
	// the test writes, then taken again.
	f.keeper.Clear(f.keeper.Current())
	l, err := audit.Open(f.audit, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 250 {
		if err := l.Write(audit.Entry{Time: time.Now().UTC(), Identity: []string{"alice", "bob"}[i%2], Method: "tools/call", Name: fmt.Sprintf("n-%03d", i), Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	f.apply(t, fmt.Sprintf(gatewayConfig, f.audit))
	ctx := newTab(t)
	signIn(t, ctx, f.URL, aliceToken)
	do(t, ctx, chromedp.Navigate(f.URL+"/console/audit?identity=bob"), chromedp.WaitVisible(chromedp.ID("audit")))
	first := func() string { return text(t, ctx, "#audit tbody tr:first-child td:nth-child(4)") }
	if got, n := first(), text(t, ctx, "#matched"); got != "n-249" || n != "100" {
		t.Errorf("bob's newest page starts at %s with %s entries, want n-249 and 100", got, n)
	}
	if href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("export").href`)); err != nil || !strings.HasSuffix(href, "/console/audit/export?identity=bob") {
		t.Errorf("the export link is %q (%v), want bob's matches", href, err)
	}
	click(t, ctx, "older")
	if got, n := first(), text(t, ctx, "#matched"); got != "n-049" || n != "25" {
		t.Errorf("bob's older page starts at %s with %s entries, want n-049 and 25", got, n)
	}
	if v, err := chromedp.Run(ctx, chromedp.Value(chromedp.ID("f-identity"))); err != nil || v != "bob" {
		t.Errorf("the older page's filter is %q (%v), want bob kept", v, err)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#older").length`)); err != nil || n != 0 {
		t.Errorf("the oldest page has an Older link (%d, %v)", n, err)
	}
}

// A viewer sees exactly the tools the policy lets them call: bob's
// policy hides get-sum, so his tools page, search and tool pages have no
// trace of it, and a try-it of it answers as one of a tool that does not
// exist. alice sees it.
func TestViewerSeesOnlyTheirTools(t *testing.T) {
	f := newFixture(t)
	sum := getSum(t, f)
	ctx := newTab(t)
	signIn(t, ctx, f.URL, bobToken)
	for _, path := range []string{"/console/tools", "/console/tools?q=" + url.QueryEscape("add two numbers")} {
		do(t, ctx, chromedp.Navigate(f.URL+path), chromedp.WaitVisible(chromedp.CSS("main h1")))
		if body := text(t, ctx, "main"); strings.Contains(body, "get-sum") || !strings.Contains(body, "echo") && path == "/console/tools" {
			t.Errorf("bob's %s: %q, want every tool but get-sum", path, body)
		}
	}
	do(t, ctx, chromedp.Navigate(f.URL+"/console/tools/"+sum), chromedp.WaitVisible(chromedp.CSS("main h1")))
	if body := text(t, ctx, "main"); !strings.Contains(body, fmt.Sprintf("No tool is named %q", sum)) || strings.Contains(body, "numbers") {
		t.Errorf("bob's page of %s: %q, want it unknown", sum, body)
	}
	// A hidden tool's try-it and a made-up one's read the same.
	hidden := tryHidden(t, ctx, f.URL, sum)
	madeUp := tryHidden(t, ctx, f.URL, "mcp__everything__no-such-tool")
	if strings.ReplaceAll(hidden, sum, "NAME") != strings.ReplaceAll(madeUp, "mcp__everything__no-such-tool", "NAME") || !strings.Contains(hidden, "unknown tool") {
		t.Errorf("a hidden tool's try-it says %q, a made-up one's %q; want the same unknown tool", hidden, madeUp)
	}
	signIn(t, ctx, f.URL, aliceToken)
	do(t, ctx, chromedp.Navigate(f.URL+"/console/tools"), chromedp.WaitVisible(chromedp.CSS("main h1")))
	if body := text(t, ctx, "main"); !strings.Contains(body, sum) {
		t.Errorf("alice's tools page: %q, want %s", body, sum)
	}
}

// A tool the policy hides from a viewer is on no page of theirs, the
// traffic and audit pages included: bob, whom the policy denies get-sum,
// finds no trace of alice's calls of it (in flight, charted, in the
// trail or its export), while alice, who may call it, sees them all.
func TestHiddenToolOnNoPage(t *testing.T) {
	f := newFixture(t)
	sum := getSum(t, f)
	ctx := newTab(t)
	signIn(t, ctx, f.URL, aliceToken)
	tryIt(t, ctx, f.URL, sum, map[string]string{"a": "1", "b": "2"})
	tryIt(t, ctx, f.URL, "flaky", nil)
	h := http.Header{"Authorization": {"Bearer " + aliceToken}}
	_, end, err := f.tracker.Enter(context.Background(), gateway.Call{Tool: sum, Public: sum, Header: h, Client: "held-open"})
	if err != nil {
		t.Fatalf("alice's call of %s: %v", sum, err)
	}
	defer end(gateway.Outcome{})
	export := func() string {
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch("/console/audit/export").then(r => r.text())`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	pages := func() map[string]string {
		out := map[string]string{}
		for _, path := range []string{"/console/traffic", "/console/audit"} {
			do(t, ctx, chromedp.Navigate(f.URL+path), chromedp.WaitVisible(chromedp.CSS("main h1")))
			out[path] = text(t, ctx, "main")
		}
		out["export"] = export()
		return out
	}
	for path, body := range pages() {
		if !strings.Contains(body, sum) || !strings.Contains(body, "flaky") {
			t.Errorf("alice's %s: %q, want %s and flaky", path, body, sum)
		}
	}
	signIn(t, ctx, f.URL, bobToken)
	for path, body := range pages() {
		if strings.Contains(body, "get-sum") || !strings.Contains(body, "flaky") {
			t.Errorf("bob's %s: %q, want flaky and no trace of get-sum", path, body)
		}
	}
}

// The servers page and a server's page show a viewer the pin notes, scan
// findings, withheld definitions and counts of what the policy lets them
// see only: bob, whom the policy denies get-sum, finds no trace of its
// pin note or finding, on the page or in the live table, and his count
// of everything's tools leaves it out; alice sees them all.
func TestHiddenToolOnNoServerPage(t *testing.T) {
	f := newFixture(t)
	prompt := "published prompt " + f.reg.Prompts()[0].Origin.Name + " (pin: warn): not pinned" // bob sees every prompt
	f.mu.Lock()
	f.pinNotes = []string{"published tool get-sum (pin: warn): changed since pinned: description", "published tool echo (pin: warn): not pinned", prompt}
	f.scan = &host.ScanReport{Findings: []host.ScanFinding{
		{Tool: "get-sum", Server: "everything", Severity: "high", Rule: "instruction-override", Field: "/description", Excerpt: "ignore the user"},
		{Tool: "echo", Server: "everything", Severity: "medium", Rule: "exfiltration-url", Field: "/description", Excerpt: "send to http://x"},
	}, Held: []string{"get-sum", "echo"}}
	f.mu.Unlock()
	ctx := newTab(t)
	row := `tr[data-server="everything"]`
	tools := func() string { return text(t, ctx, row+" td:nth-child(5)") }
	// The live table: the servers page and its event stream's first rows.
	live := func() string {
		do(t, ctx, chromedp.Navigate(f.URL+"/console"), chromedp.WaitVisible(chromedp.CSS(row)))
		events, done := openEvents(t, ctx, f.URL)
		defer done()
		var data []string
		for {
			line, err := events.ReadString('\n')
			if err != nil {
				t.Fatalf("reading the servers' events: %v", err)
			}
			if line == "\n" && len(data) > 0 {
				break
			}
			if rest, ok := strings.CutPrefix(line, "data: "); ok {
				data = append(data, rest)
			}
		}
		return text(t, ctx, "main") + strings.Join(data, "")
	}
	page := func() string {
		do(t, ctx, chromedp.Navigate(f.URL+"/console/servers/everything"), chromedp.WaitVisible(chromedp.ID("state")))
		return text(t, ctx, "main")
	}
	signIn(t, ctx, f.URL, aliceToken)
	body := page()
	for _, want := range []string{"published tool get-sum", "ignore the user", "Withheld: get-sum echo", prompt} {
		if !strings.Contains(body, want) {
			t.Errorf("alice's page of everything: %q, want %q", body, want)
		}
	}
	if body := live(); !strings.Contains(body, "2 withheld · 2 findings") {
		t.Errorf("alice's live servers table: %q, want 2 withheld and 2 findings", body)
	}
	all := tools()
	signIn(t, ctx, f.URL, bobToken)
	body = page()
	if strings.Contains(body, "get-sum") || !strings.Contains(body, "published tool echo") || !strings.Contains(body, prompt) || !strings.Contains(body, "send to http://x") || !strings.Contains(body, "Withheld: echo") {
		t.Errorf("bob's page of everything: %q, want echo's note and finding and no trace of get-sum", body)
	}
	if body := live(); strings.Contains(body, "get-sum") || !strings.Contains(body, "1 withheld · 1 finding") || strings.Contains(body, "1 findings") {
		t.Errorf("bob's live servers table: %q, want echo's withheld and finding alone", body)
	}
	if got := tools(); fmt.Sprint(mustAtoi(t, all)-1) != got {
		t.Errorf("bob's count of everything's tools is %s, alice's %s: want get-sum left out of his", got, all)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("%q is not a count: %v", s, err)
	}
	return n
}

// The traffic page screens a call of a prompt or resource as the Gate
// decides it, by the policy's prompts and resources rules: bob, whom a
// reload lets see no prompt and no server's resources, finds no trace of
// alice's prompts/get and resources/read in flight, while alice sees both,
// with their methods. The calls of tools past the charts' bound are shown
// to one who sees every tool only.
func TestHiddenOffersNotInTraffic(t *testing.T) {
	f := newFixture(t)
	f.apply(t, strings.Replace(fmt.Sprintf(gatewayConfig, f.audit), `deny: ["*get-sum*"]`, `deny: ["*get-sum*"]
    prompts: []
    resources: []`, 1))
	prompts, resources := f.reg.Prompts(), f.reg.Resources()
	if len(prompts) == 0 || len(resources) == 0 {
		t.Fatal("server-everything offers no prompt or no resource")
	}
	prompt, res := prompts[0].Name, resources[0]
	h := http.Header{"Authorization": {"Bearer " + aliceToken}}
	for _, c := range []gateway.Call{
		{Method: gateway.MethodGetPrompt, Tool: prompt, Public: prompt, Header: h, Client: "held-open"},
		{Method: gateway.MethodReadResource, Tool: res.URI, Public: res.URI, Server: res.Server, Header: h, Client: "held-open"},
	} {
		_, end, err := f.tracker.Enter(context.Background(), c)
		if err != nil {
			t.Fatalf("alice's %s of %s: %v", c.Method, c.Public, err)
		}
		defer end(gateway.Outcome{})
	}
	for i := range 100 {
		f.rates.CallStarted(fmt.Sprintf("made-up-%03d", i))(tool.Result{}, false)
	}
	ctx := newTab(t)
	traffic := func() string {
		do(t, ctx, chromedp.Navigate(f.URL+"/console/traffic"), chromedp.WaitVisible(chromedp.CSS("main h1")))
		return text(t, ctx, "main")
	}
	signIn(t, ctx, f.URL, aliceToken)
	body := traffic()
	for _, want := range []string{"prompts/get " + prompt, "resources/read " + res.URI, "(other tools)"} {
		if !strings.Contains(body, want) {
			t.Errorf("alice's traffic page: %q, want %q", body, want)
		}
	}
	signIn(t, ctx, f.URL, bobToken)
	body = traffic()
	for _, hidden := range []string{prompt, res.URI, "(other tools)"} {
		if strings.Contains(body, hidden) || !strings.Contains(body, "made-up-000") {
			t.Errorf("bob's traffic page: %q, want the charts of tools he sees and no trace of %q", body, hidden)
		}
	}
}

// An export that cannot be read whole (a line past the reader's 16 MiB,
// written before lines were bounded, or by another program) fails as a
// download instead of ending as if complete: the lines after it are not
// silently missing from a file that looks whole.
func TestAuditExportCutFails(t *testing.T) {
	f := newFixture(t)
	ctx := newTab(t)
	signIn(t, ctx, f.URL, aliceToken)
	tryIt(t, ctx, f.URL, "flaky", nil)
	trail, err := os.OpenFile(f.audit, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	trail.WriteString(`{"identity":"x","name":"` + strings.Repeat("y", 16<<20) + `","prev":""}` + "\n")
	trail.Close()
	tryIt(t, ctx, f.URL, "flaky", nil)
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch("/console/audit/export").then(r => r.text()).then(() => "whole", e => "failed: " + e)`, chromedp.EvalAwaitPromise))
	if err != nil || !strings.HasPrefix(got, "failed") {
		t.Errorf("the export of a trail it cannot read whole: %q (%v), want a failed download", got, err)
	}
}

// A live stream of the servers table ends when its viewer's grant is
// revoked, as their next page would: it does not go on showing the
// gateway's state to one who may no longer see it.
func TestEventsEndWithTheGrant(t *testing.T) {
	f := newFixture(t)
	ctx := newTab(t)
	signIn(t, ctx, f.URL, aliceToken)
	events, done := openEvents(t, ctx, f.URL)
	defer done()
	if line, err := events.ReadString('\n'); err != nil || line != "event: servers\n" {
		t.Fatalf("the stream begins %q (%v), want the servers event", line, err)
	}
	f.apply(t, strings.Replace(fmt.Sprintf(gatewayConfig, f.audit), "allow: {subjects: [alice, bob, carol]}", "allow: {subjects: [bob]}", 1))
	ended := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, events)
		ended <- err
	}()
	select {
	case err := <-ended:
		if err != nil {
			t.Errorf("the stream ended with %v, want its end", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the stream went on 10 s after alice's grant was revoked")
		done()
	}
}

// openEvents opens the servers' event stream with the sign-in of the
// browser context ctx, and returns it and what closes it.
func openEvents(t *testing.T, ctx context.Context, base string) (*bufio.Reader, func()) {
	t.Helper()
	var cookie string
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{base + "/console"}})
	for _, c := range res.Cookies {
		if c.Name == "mcpbridge_console" {
			cookie = c.Name + "=" + c.Value
		}
	}
	if err != nil || cookie == "" {
		t.Fatalf("the sign-in cookie: %q, %v", cookie, err)
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/console/events", nil)
	req.Header.Set("Cookie", cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return bufio.NewReader(resp.Body), func() { resp.Body.Close() }
}

// A server's error text with carriage returns (a remote server's words)
// cannot end the live table's event early: the rows after it still show.
func TestEventsKeepCarriageReturnsInTheirData(t *testing.T) {
	f := newFixture(t)
	ctx := newTab(t)
	signIn(t, ctx, f.URL, aliceToken)
	do(t, ctx, chromedp.Navigate(f.URL+"/console"), chromedp.WaitVisible(chromedp.CSS(`tr[data-server="everything"]`)))
	f.mu.Lock()
	f.status = []host.Status{
		{ID: "evil", Name: "evil", Plugin: "mcp-client", State: host.StateFailed, Err: "refused\r\revent: x\r\rdata: y\r"},
		{ID: "later", Name: "later", Plugin: "mcp-client", State: host.StateFailed, Err: "down"},
	}
	f.mu.Unlock()
	live, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := chromedp.Do(live, chromedp.WaitVisible(chromedp.CSS(`tr[data-server="later"]`))); err != nil {
		t.Errorf("the row after a server's error with carriage returns did not show live: %q (%v)", text(t, ctx, "main"), err)
	}
}
