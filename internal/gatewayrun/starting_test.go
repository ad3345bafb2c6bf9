package gatewayrun_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/gatewayauth"
	"github.com/mcpbridge/mcpbridge/internal/gatewayrun"
	gatewaykind "github.com/mcpbridge/mcpbridge/internal/kinds/gateway"
)

// hangingServer accepts TCP connections and never answers on them.
func hangingServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns sync.WaitGroup
	t.Cleanup(func() { ln.Close(); conns.Wait() })
	conns.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Go(func() { io.Copy(io.Discard, c); c.Close() }) // ends when the client closes
		}
	})
	return ln.Addr().String()
}

// Until the gateway entry has loaded (its store at a port that accepts
// and never answers), every request is answered 503 with Retry-After,
// saying the gateway is starting, whatever its token, with no
// WWW-Authenticate; /readyz says not ready; serve says it is starting,
// and never that it serves MCP, as the entry never loads. A valid static
// token was answered 401 with WWW-Authenticate, which tells an OAuth
// client to drop its token, and "serving MCP on" had been printed.
func TestRequestsWhileGatewayEntryStarts(t *testing.T) {
	run := startLoading(t, "- {id: gw, name: gateway, config: {auth: {tokens: {ci: CI_TOKEN}}, store: {redis: {url: 'redis://"+hangingServer(t)+"'}}}}\n")
	endpoint, done := run.endpoint, run.done

	requests := 0
	for ended := false; !ended; requests++ {
		for _, token := range []string{"tok", "wrong", ""} {
			checkStarting(t, endpoint, token)
		}
		checkNotReady(t, strings.Replace(endpoint, "/mcp", "/readyz", 1))
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), `gateway entry "gw" could not be applied`) {
				t.Errorf("Run: %v; want the gateway entry's failure", err)
			}
			ended = true
		case <-time.After(20 * time.Millisecond):
		}
	}
	if requests < 2 {
		t.Errorf("only %d rounds of requests before the entry failed", requests)
	}
	if rest := <-run.logged; strings.Contains(rest, "serving MCP") {
		t.Errorf("serve said it serves MCP, though its gateway entry never loaded:\n%s%s", run.first, rest)
	}
}

// loadingRun is a run whose gateway entry is loading.
type loadingRun struct {
	endpoint string      // the MCP endpoint serve announced
	first    string      // serve's first line, saying it starts
	done     chan error  // the run's end
	logged   chan string // what serve printed after its first line, once it ended
}

// startLoading runs serve over HTTP on the config src, whose gateway entry
// is to load, until serve says it is starting.
func startLoading(t *testing.T, src string) loadingRun {
	t.Helper()
	read := func(c *host.Catalog) (*host.Plan, error) {
		return c.ParseIsolated("f.yaml", []byte(src), func(string) (string, bool) { return "tok", true })
	}
	pr, pw := io.Pipe()
	cfg := config("", nil, pw)
	cfg.Catalog = func(k *gatewayauth.Keeper) *host.Catalog { return host.NewCatalog(gatewaykind.NewKind(k)) }
	cfg.Load = func(c *host.Catalog) (gatewayrun.Source, error) {
		plan, err := read(c)
		return gatewayrun.Source{Plan: plan}, err
	}
	cfg.Reload, cfg.Stdio, cfg.HTTPAddr = read, false, "127.0.0.1:0"
	run := loadingRun{done: make(chan error, 1), logged: make(chan string, 1)}
	go func() { run.done <- gatewayrun.Run(context.Background(), cfg); pw.Close() }()
	lines := bufio.NewReader(pr)
	first, err := lines.ReadString('\n')
	_, rest, found := strings.Cut(first, "mcpbridge: starting on ")
	if err != nil || !found {
		t.Fatalf("first line %q, %v; want it to say serve is starting", first, err)
	}
	run.endpoint, run.first = strings.TrimSuffix(strings.Fields(rest)[0], ":"), first
	go func() { b, _ := io.ReadAll(lines); run.logged <- string(b) }()
	return run
}

// While the gateway entry loads at serve's start (its store at a port
// that accepts and never answers), /readyz's report says the gateway is
// starting. It said the gateway entry is not in force, as if it were
// disabled or removed.
func TestReadinessWhileGatewayEntryStartsSaysStarting(t *testing.T) {
	run := startLoading(t, "- {id: gw, name: gateway, config: {store: {redis: {url: 'redis://"+hangingServer(t)+"'}}}}\n")
	defer func() { <-run.done }()
	resp, err := http.Get(strings.Replace(run.endpoint, "/mcp", "/readyz", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h gateway.Health
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil || resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(h.Refusing, "the gateway is starting") {
		t.Errorf("/readyz as serve starts: %d %+v, %v; want 503, refusing as the gateway starting", resp.StatusCode, h, err)
	}
}

// checkStarting fails unless a POST to endpoint with token is refused as
// the gateway starting.
func checkStarting(t *testing.T, endpoint, token string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return // the run ended meanwhile
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if strings.Contains(string(body), "the gateway is shutting down") {
		return // the run is ending: the entry failed
	}
	if resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(string(body), "gateway entry is not in force (it could not be applied") {
		return // the entry failed, and the run is about to end
	}
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || resp.Header.Get("WWW-Authenticate") != "" ||
		!strings.Contains(string(body), "the gateway is starting") {
		t.Errorf("token %q while the gateway entry loads: %d, Retry-After %q, WWW-Authenticate %q, %q; want 503 saying the gateway is starting, Retry-After and no WWW-Authenticate",
			token, resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("WWW-Authenticate"), body)
	}
}

// checkNotReady fails unless readyz answers 503.
func checkNotReady(t *testing.T, readyz string) {
	t.Helper()
	resp, err := http.Get(readyz)
	if err != nil {
		return
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz while the gateway entry loads: %d, want 503", resp.StatusCode)
	}
}
