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
	src := fmt.Sprintf(`- id: gw
  name: gateway
  config:
    auth: {tokens: {alice: ALICE_TOKEN}}
    console: {allow: {subjects: [alice]}}
    store: {redis: {url: %q, keyPrefix: %q}}
`, redis.URL(), t.Name()+":")
	lookup := func(name string) (string, bool) {
		if name == "ALICE_TOKEN" {
			return "alice-console-token", true
		}
		return "", false
	}
	read := func(c *host.Catalog) (*host.Plan, error) { return c.ParseIsolated("f.yaml", []byte(src), lookup) }
	pr, pw := io.Pipe()
	defer pw.Close()
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
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	base := servedAt(t, pr)
	viewer := consoleViewer(t, base, "alice-console-token")
	store := "store (redis " + redis.Addr() + ")"

	redis.Stop()
	page := viewer(t, "/console")
	if !regexp.MustCompile(regexp.QuoteMeta(store) + `(?s:.*)degraded(?s:.*)does not answer`).MatchString(page) {
		t.Errorf("the servers page with the store's Redis stopped does not list %q degraded, saying why:\n%s", store, page)
	}
	redis.Start()
	mcptest.Eventually(t, 10*time.Second, func() bool {
		page = viewer(t, "/console")
		return strings.Contains(page, store) && !strings.Contains(page, "degraded")
	}, "the servers page to list the store ready once Redis is back")
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

// consoleViewer signs in to the console at base with token and returns a
// function reading a page's body.
func consoleViewer(t *testing.T, base, token string) func(*testing.T, string) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodPost, base+"/console/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("signing in to the console: %d, want 303", resp.StatusCode)
	}
	return func(t *testing.T, path string) string {
		t.Helper()
		resp, err := c.Get(base + path)
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
}
