package gatewayrun_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/gatewayauth"
	"github.com/mcpbridge/mcpbridge/internal/gatewayrun"
	gatewaykind "github.com/mcpbridge/mcpbridge/internal/kinds/gateway"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// The console's servers page says what /healthz says beyond the host's
// entries: with the store's Redis stopped, the store is listed degraded,
// saying why, and ready again once Redis is back. It listed the host's
// entries alone, all ready, while /healthz answered 503 and every task
// was refused for want of the store.
func TestConsoleShowsTheStore(t *testing.T) {
	redis := mcptest.StartRedis(t)
	base := serveReplica(t, redis)
	viewer := signIn(t, base, "alice-console-token")
	store := "store (redis " + redis.Addr() + ")"

	redis.Stop()
	page := viewer.page(t, "/console")
	if !regexp.MustCompile(regexp.QuoteMeta(store) + `(?s:.*)degraded(?s:.*)does not answer`).MatchString(page) {
		t.Errorf("the servers page with the store's Redis stopped does not list %q degraded, saying why:\n%s", store, page)
	}
	redis.Start()
	mcptest.Eventually(t, 10*time.Second, func() bool {
		page = viewer.page(t, "/console")
		return strings.Contains(page, store) && !strings.Contains(page, "degraded")
	}, "the servers page to list the store ready once Redis is back")
}

// Three replicas of serve share a store, two with one config, the
// third with another policy: every replica's /healthz and its console's
// servers page say that the replicas apply 2 different configs, and how
// many apply which, while /readyz stays 200. Nothing showed it, and a
// client's call was allowed on one replica and denied on another.
func TestReplicasShowTheyApplyDifferentConfigs(t *testing.T) {
	redis := mcptest.StartRedis(t)
	bases := []string{serveReplica(t, redis), serveReplica(t, redis),
		serveReplicaWith(t, redis, "    policy: [{deny: [\"mcp__*\"]}]\n")}
	want := []string{"(2 replicas), other", "(2 replicas), other", "(1 replica), other"}
	for i, base := range bases {
		var body string
		mcptest.Eventually(t, 30*time.Second, func() bool {
			_, body = probe(t, base+"/healthz")
			return strings.Contains(body, "replicas apply 2 different configs: this one ") && strings.Contains(body, want[i])
		}, "replica %d's /healthz to say the replicas apply 2 configs, %q; it says %s", i, want[i], body)
		if code, body := probe(t, base+"/readyz"); code != http.StatusOK {
			t.Errorf("replica %d's /readyz while the configs differ: %d %s, want 200", i, code, body)
		}
		if page := signIn(t, base, "alice-console-token").page(t, "/console"); !strings.Contains(page, "replicas apply 2 different configs") {
			t.Errorf("replica %d's servers page does not say the replicas' configs differ:\n%s", i, page)
		}
	}
}

// probe is the status and body of GET url with alice's token.
func probe(t *testing.T, url string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer alice-console-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// serveReplica runs serve over HTTP, alice signing in to its console, with
// a store in redis, until the test ends; it returns its base URL.
func serveReplica(t *testing.T, redis *mcptest.RedisServer) string {
	t.Helper()
	return serveReplicaWith(t, redis, "")
}

// serveReplicaWith is serveReplica with more of the gateway entry's
// config (indented as its keys).
func serveReplicaWith(t *testing.T, redis *mcptest.RedisServer, more string) string {
	t.Helper()
	src := fmt.Sprintf(`- id: gw
  name: gateway
  config:
    auth: {tokens: {alice: ALICE_TOKEN}}
    console: {allow: {subjects: [alice]}}
    store: {redis: {url: %q, keyPrefix: %q}}
`, redis.URL(), t.Name()+":") + more
	lookup := func(name string) (string, bool) {
		if name == "ALICE_TOKEN" {
			return "alice-console-token", true
		}
		return "", false
	}
	read := func(c *host.Catalog) (*host.Plan, error) { return c.ParseIsolated("f.yaml", []byte(src), lookup) }
	pr, pw := io.Pipe()
	cfg := gatewayrun.Config{
		HTTPAddr: "127.0.0.1:0", ReadyTimeout: -1, Logger: slog.New(slog.DiscardHandler),
		Stdout: io.Discard, Stderr: pw, Lookup: lookup,
		Catalog: func(k *gatewayauth.Keeper) *host.Catalog { return host.NewCatalog(gatewaykind.NewKind(k)) },
		Load: func(c *host.Catalog) (gatewayrun.Source, error) {
			plan, err := read(c)
			return gatewayrun.Source{Plan: plan}, err
		},
		Reload: read,
		Files:  func() []string { return nil },
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- gatewayrun.Run(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		pw.Close()
	})
	return servedAt(t, pr)
}

// servedAt is the base URL a run announces on r; the rest of r is drained.
func servedAt(t *testing.T, r io.Reader) string {
	t.Helper()
	lines := bufio.NewScanner(r)
	for lines.Scan() {
		if u, ok := strings.CutPrefix(lines.Text(), "mcpbridge: serving MCP on "); ok {
			go func() {
				for lines.Scan() {
				}
			}()
			return strings.TrimSuffix(strings.Fields(u)[0], "/mcp")
		}
	}
	t.Fatalf("the run announced no address: %v", lines.Err())
	return ""
}

// consoleViewer is a viewer signed in to a console.
type consoleViewer struct {
	c    *http.Client
	jar  http.CookieJar
	base string
}

// signIn signs in to the console at base with token.
func signIn(t *testing.T, base, token string) *consoleViewer {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	v := &consoleViewer{jar: jar, base: base,
		c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	req, _ := http.NewRequest(http.MethodPost, base+"/console/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	resp, err := v.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("signing in to the console: %d, want 303", resp.StatusCode)
	}
	return v
}

// page is the body of the viewer's page at path.
func (v *consoleViewer) page(t *testing.T, path string) string {
	t.Helper()
	resp, err := v.c.Get(v.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
	}
	return string(b)
}

// Two replicas sharing a store behind a balancer: a viewer signed in on
// one who reaches the other is sent to its sign-in page, which says why
// (each replica keeps its own sign-ins) and what to do. It showed the
// sign-in form alone, as if the viewer had never signed in.
func TestConsoleSignInOfAnotherReplica(t *testing.T) {
	redis := mcptest.StartRedis(t)
	a, b := serveReplica(t, redis), serveReplica(t, redis)
	viewer := signIn(t, a, "alice-console-token")
	if page := viewer.page(t, "/console"); !strings.Contains(page, "Sign out") {
		t.Fatalf("the console of the replica signed in on:\n%s", page)
	}
	// The balancer sends the same browser, cookie and all, to b: a
	// cookie is the host's, whatever the port.
	jar, _ := cookiejar.New(nil)
	aURL, _ := url.Parse(a + "/console")
	bURL, _ := url.Parse(b + "/console")
	jar.SetCookies(bURL, viewer.jar.Cookies(aURL))
	c := &http.Client{Jar: jar}
	resp, err := c.Get(b + "/console")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "does not know your sign-in") || !strings.Contains(string(body), "another replica") {
		t.Errorf("another replica's console, reached with a sign-in of the first: %d %s", resp.StatusCode, body)
	}
	resp, err = http.Get(b + "/console/login")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(body), "does not know your sign-in") {
		t.Errorf("the sign-in page of a browser that never signed in says it was signed in:\n%s", body)
	}
}
