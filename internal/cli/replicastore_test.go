package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/gatewayauth"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// storeGateway is a gateway entry limiting each identity to 10 calls a
// second (burst 10), its buckets in the Redis at %s. The burst keeps a
// token that falls due while every caller waits for a slow answer: a
// measured rate then shows the limit, not the machine's load.
const storeGateway = `- id: gw
  name: gateway
  config:
    auth: {tokens: {ci: GW_CI_AUTH}}
    rateLimit: {perIdentity: 10/s, burst: 10}
    store: {redis: {url: "%s", keyPrefix: "%s:"}}
`

// Three `serve --http --stateless` replicas behind a round-robin balancer,
// sharing a real redis-server: an identity limited to 10 calls/s gets 10
// a second across the three, not 30; /healthz reports the store. When
// redis-server stops, every call is still answered (each replica falls
// back to its own limit) and /healthz says the store is degraded; when it
// is back, the limit is shared again.
func TestServeReplicasShareRateLimit(t *testing.T) {
	srv := mcptest.StartRedis(t)
	cfg := writeConfig(t, fixtureEntries(t, "a")+fmt.Sprintf(storeGateway, srv.URL(), t.Name()))
	var urls []string
	var replicas []*servingProcess
	for range 3 {
		p := startServing(t, []string{"GW_CI_AUTH=ci-static-token"}, "serve", "--http", "127.0.0.1:0", "--stateless", "--config", cfg)
		urls = append(urls, p.url)
		replicas = append(replicas, p)
	}
	for _, p := range replicas { // serve answers at once; its gateway entry takes a moment
		mcptest.Eventually(t, 30*time.Second, func() bool { return ready(p) }, "%s to be ready", p.url)
	}
	balancer := httptest.NewServer(newRoundRobin(t, urls...).proxy())
	defer balancer.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: balancer.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{"ci-static-token"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	waitTools(t, cs, "mcp__a__greet")
	storeName := "store (redis " + srv.Addr() + ")"
	for _, p := range replicas {
		if got := storeHealth(t, p, storeName); got != "ready" {
			t.Fatalf("/healthz gives the store %q, want ready", got)
		}
	}

	drain(t, cs)
	served, sent, elapsed := hammer(t, cs, time.Second)
	t.Logf("three replicas served %d calls in %v", served, elapsed)
	checkRate(t, served, sent, elapsed, "with the store")

	srv.Stop()
	served, _, elapsed = hammer(t, cs, 500*time.Millisecond) // every call answered: served or refused, never failed
	t.Logf("with the store down, three replicas served %d calls in %v", served, elapsed)
	for _, p := range replicas {
		if got := storeHealth(t, p, storeName); got != "degraded" {
			t.Errorf("/healthz with the store down gives it %q, want degraded", got)
		}
	}

	srv.Start()
	for _, p := range replicas {
		mcptest.Eventually(t, 20*time.Second, func() bool { return storeHealth(t, p, storeName) == "ready" }, "the store to be ready again on %s", p.url)
	}
	// Each replica tries the store again a second after it failed: calls
	// go on until every one says its limits are shared again.
	mcptest.Eventually(t, 30*time.Second, func() bool {
		hammer(t, cs, 0)
		return !slices.ContainsFunc(replicas, func(p *servingProcess) bool {
			return !strings.Contains(p.stderr.String(), "rate limits are shared by the replicas again")
		})
	}, "every replica to share its limits again")
	drain(t, cs)
	served, sent, elapsed = hammer(t, cs, time.Second)
	t.Logf("with the store back, three replicas served %d calls in %v", served, elapsed)
	checkRate(t, served, sent, elapsed, "after the store came back")
	for _, p := range replicas {
		if w := "rate limits fall back to this replica's own buckets"; !strings.Contains(p.stderr.String(), w) {
			t.Errorf("a replica's log lacks %q:\n%s", w, p.stderr)
		}
		if strings.Contains(p.stderr.String(), "\nredis: ") {
			t.Errorf("go-redis wrote past the structured log:\n%s", p.stderr)
		}
		if failed, fellBack := storeCounts(t, p); failed == 0 || fellBack == 0 {
			t.Errorf("/metrics counts %v failed store calls and %v fallbacks, want some of each", failed, fellBack)
		}
	}
}

// hammerers call at once, so a token is taken soon after it is due
// even when one call is slow to come back.
const hammerers = 6

// hammer calls as fast as hammerers can for at least d (one call each for
// 0) and returns how many calls were served, how long calls were being
// sent (from the start to the last call's sending) and how long until the
// last answer; every other call must be refused by the rate limit, never
// fail otherwise.
func hammer(t *testing.T, cs *mcp.ClientSession, d time.Duration) (served int, sent, elapsed time.Duration) {
	t.Helper()
	start := time.Now()
	var n atomic.Int32
	var lastSent atomic.Int64
	errs := make(chan error, hammerers)
	var wg sync.WaitGroup
	for range hammerers {
		wg.Go(func() {
			for first := true; first || time.Since(start) < d; first = false {
				for now := int64(time.Since(start)); ; {
					if was := lastSent.Load(); was >= now || lastSent.CompareAndSwap(was, now) {
						break
					}
				}
				if err := limitedCall(cs); err == errRefused {
					continue
				} else if err != nil {
					errs <- err
					return
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed = time.Since(start)
	close(errs)
	for err := range errs {
		t.Fatalf("a call failed: %v", err)
	}
	return int(n.Load()), time.Duration(lastSent.Load()), elapsed
}

// errRefused is limitedCall's answer for a call the rate limit refused.
var errRefused = errors.New("refused by the rate limit")

// limitedCall calls the fixture's greet tool once.
func limitedCall(cs *mcp.ClientSession) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__a__greet", Arguments: map[string]any{"name": "x"}})
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code == gatewayauth.CodeRateLimited {
		return errRefused
	}
	return err
}

// drain calls until the rate limit refuses one, so that the identity's
// burst is spent and what hammer measures next is the rate alone.
func drain(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	for range 1000 {
		switch err := limitedCall(cs); err {
		case errRefused:
			return
		case nil:
		default:
			t.Fatalf("a call failed: %v", err)
		}
	}
	t.Fatal("1,000 calls in a row were served: the rate limit never refused one")
}

// checkRate fails unless served is what 10 calls a second allow once
// the burst is spent: at most a token per 100 ms until the last answer
// (elapsed), plus the one that may have been falling due when drain
// ended and one more falling due; and at least 85% of the tokens that
// fell due while calls were still being sent (a token kept by the burst
// is taken by the next call, however slow the machine).
func checkRate(t *testing.T, served int, sent, elapsed time.Duration, when string) {
	t.Helper()
	most := int(elapsed.Seconds()*10) + 2
	least := int(sent.Seconds() * 10 * 0.85)
	if served > most || served < least {
		t.Errorf("%s: %d calls served in %v (sent for %v) of an identity limited to 10/s across three replicas, want %d to %d", when, served, elapsed, sent, least, most)
	}
}

// ready reports whether p's /readyz says it is ready.
func ready(p *servingProcess) bool {
	req, _ := http.NewRequest(http.MethodGet, p.base()+"/readyz", nil)
	req.Header.Set("Authorization", "Bearer ci-static-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// storeCounts are p's counts of store calls failed and of fallbacks.
func storeCounts(t *testing.T, p *servingProcess) (failed, fellBack float64) {
	t.Helper()
	m := scrape(t, p.base()+"/metrics", "ci-static-token")
	if f := m["mcpbridge_store_fallbacks_total"]; f != nil {
		fellBack = f.GetMetric()[0].GetCounter().GetValue()
	}
	for _, c := range m["mcpbridge_store_calls_total"].GetMetric() {
		for _, l := range c.GetLabel() {
			if l.GetName() == "outcome" && l.GetValue() == "error" {
				failed += c.GetCounter().GetValue()
			}
		}
	}
	return failed, fellBack
}

// storeHealth is the state /healthz gives the store named name.
func storeHealth(t *testing.T, p *servingProcess, name string) string {
	t.Helper()
	return healthState(t, p, "ci-static-token", name)
}

// serve with a store that cannot be reached does not start: it says
// which host and port, never the password.
func TestServeStoreUnreachable(t *testing.T) {
	srv := mcptest.StartRedis(t)
	srv.Stop()
	url := strings.Replace(srv.URL(), "redis://", "redis://:pw-not-shown@", 1)
	cfg := writeConfig(t, fixtureEntries(t, "a")+fmt.Sprintf(storeGateway, url, "x"))
	cmd := mcpbridgeCommand(t, "serve", "--http", "127.0.0.1:0", "--stateless", "--config", cfg)
	cmd.Env = append(cmd.Env, "GW_CI_AUTH=t")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "the store at redis "+srv.Addr()+" does not answer") || strings.Contains(string(out), "pw-not-shown") {
		t.Fatalf("serve with the store down: %v\n%s", err, out)
	}
}
