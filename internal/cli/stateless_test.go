package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// roundRobin is a plain balancer: each request goes to the next backend,
// with no affinity of any kind. It counts the tools/call requests each
// backend got and any request that carried a session id.
type roundRobin struct {
	backends []*url.URL
	next     atomic.Uint64
	mu       sync.Mutex
	calls    map[string]int // tools/call requests by backend host
	sessions int            // requests that carried Mcp-Session-Id
}

func newRoundRobin(t *testing.T, urls ...string) *roundRobin {
	rr := &roundRobin{calls: map[string]int{}}
	for _, u := range urls {
		parsed, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		rr.backends = append(rr.backends, parsed)
	}
	return rr
}

// proxy is the balancer as an HTTP handler (httputil.ReverseProxy).
func (rr *roundRobin) proxy() http.Handler {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			target := rr.backends[rr.next.Add(1)%uint64(len(rr.backends))]
			pr.SetURL(target)
			pr.Out.URL.Path = target.Path
			pr.Out.Host = target.Host // the gateway checks Host against loopback
			rr.mu.Lock()
			defer rr.mu.Unlock()
			if pr.In.Header.Get("Mcp-Method") == "tools/call" {
				rr.calls[target.Host]++
			}
			if pr.In.Header.Get("Mcp-Session-Id") != "" {
				rr.sessions++
			}
		},
		FlushInterval: -1, // SSE responses go through at once
	}
}

// Two `serve --http --stateless` replicas behind a round-robin reverse
// proxy serve one go-sdk client, on protocol 2026-07-28, for 20 calls:
// the calls alternate between the replicas and every one succeeds.
func TestServeStatelessReplicas(t *testing.T) {
	cfg := writeConfig(t, fixtureEntries(t, "a"))
	var urls []string
	for range 2 {
		p := startServing(t, nil, "serve", "--http", "127.0.0.1:0", "--stateless", "--config", cfg)
		urls = append(urls, p.url)
	}
	rr := newRoundRobin(t, urls...)
	balancer := httptest.NewServer(rr.proxy())
	defer balancer.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: balancer.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated protocol %q, want 2026-07-28", v)
	}
	waitTools(t, cs, "mcp__a__greet")
	for i := range 20 {
		name := fmt.Sprintf("n%d", i)
		if got, isErr := callText(t, cs, "mcp__a__greet", fmt.Sprintf(`{"name":%q}`, name)); got != "Hello, "+name+"!" || isErr {
			t.Errorf("call %d: %q (isError %v)", i, got, isErr)
		}
	}

	// A 2025-11-25 client works through the same balancer too: each of its
	// requests gets a session of its own, so it is never told a session id.
	old, err := mcp.NewClient(&mcp.Implementation{Name: "old", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: balancer.URL + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if v := old.InitializeResult().ProtocolVersion; v != "2025-11-25" || old.ID() != "" {
		t.Errorf("old client: protocol %q, session %q", v, old.ID())
	}
	for i := range 4 {
		if got, isErr := callText(t, old, "mcp__a__greet", `{"name":"old"}`); got != "Hello, old!" || isErr {
			t.Errorf("2025-11-25 call %d: %q (isError %v)", i, got, isErr)
		}
	}

	rr.mu.Lock()
	defer rr.mu.Unlock()
	if rr.sessions != 0 {
		t.Errorf("%d requests carried a session id", rr.sessions)
	}
	if len(rr.calls) != 2 {
		t.Fatalf("calls by replica: %v, want both replicas", rr.calls)
	}
	// The 20 calls of the 2026-07-28 client (whose requests name their
	// method in Mcp-Method) alternate between the replicas.
	for host, n := range rr.calls {
		if n < 9 {
			t.Errorf("replica %s served %d of the 20 calls, want about half: %v", host, n, rr.calls)
		}
	}
}
