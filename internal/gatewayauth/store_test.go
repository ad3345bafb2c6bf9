package gatewayauth

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/store"
)

const storeLimited = "auth: {tokens: {ci: CI_TOKEN}}\nrateLimit: {perIdentity: 3/m, burst: 3}\nstore: {redis: {url: REDIS, keyPrefix: PREFIX}}\n"

// Two replicas sharing a store share an identity's bucket: three calls
// a minute across both, not three each. When the store goes, each falls
// back to its own bucket (logged, counted); when it comes back, the
// bucket is shared again.
func TestRateLimitSharedByReplicas(t *testing.T) {
	srv := mcptest.StartRedis(t)
	clk := &clock{t: time.Now()}
	var fellBack, storeErrs atomic.Int32
	opts := Options{Now: clk.Now, StoreFallback: func() { fellBack.Add(1) }, StoreObserve: func(_ string, err error) {
		if err != nil {
			storeErrs.Add(1)
		}
	}}
	cfg := strings.NewReplacer("REDIS", srv.URL(), "PREFIX", t.Name()+":").Replace(storeLimited)
	env := map[string]string{"CI_TOKEN": "ci-secret-token"}
	a, b := newServed(t, opts), newServed(t, opts)
	a.apply(t, cfg, env)
	b.apply(t, cfg, env)
	replicas := [2]*served{a, b}
	calls := func(n int) (ok int) {
		for i := range n {
			s := replicas[i%2]
			if code, _ := callCode(t, s.connect(t, "ci-secret-token", nil), "mcp__time__now"); code == 0 {
				ok++
			} else if code != CodeRateLimited {
				t.Fatalf("call %d: code %d", i, code)
			}
		}
		return ok
	}
	if got := calls(6); got != 3 {
		t.Fatalf("two replicas served %d of 6 calls of an identity limited to 3/m, want 3", got)
	}
	if fellBack.Load() != 0 || storeErrs.Load() != 0 {
		t.Fatalf("the store answering: %d fallbacks, %d errors", fellBack.Load(), storeErrs.Load())
	}

	srv.Stop()
	if got := calls(2); got != 2 {
		t.Fatalf("with the store down, %d of 2 calls (one per replica) were served, want each replica's own bucket to serve one", got)
	}
	if fellBack.Load() != 2 || storeErrs.Load() == 0 {
		t.Errorf("with the store down: %d fallbacks, %d store errors; want 2 and some", fellBack.Load(), storeErrs.Load())
	}
	for _, s := range replicas {
		if !strings.Contains(s.logs.String(), "rate limits fall back to this replica's own buckets") {
			t.Errorf("a replica's log does not say it fell back:\n%s", s.logs.String())
		}
		if _, err, ok := s.keeper.StoreHealth(t.Context()); !ok || err == nil || !strings.Contains(err.Error(), srv.Addr()) {
			t.Errorf("StoreHealth with the store down: %v %v", err, ok)
		}
	}

	srv.Start() // empty: the shared bucket is full again
	for _, s := range replicas {
		mcptest.Eventually(t, 10*time.Second, func() bool {
			_, err, _ := s.keeper.StoreHealth(context.Background())
			return err == nil
		}, "the store to answer the replica again")
	}
	clk.Add(storeRetry) // the replicas try the store again
	if got := calls(6); got != 3 {
		t.Fatalf("after the store came back, the replicas served %d of 6 calls, want 3 (shared again)", got)
	}
	for _, s := range replicas {
		if !strings.Contains(s.logs.String(), "rate limits are shared by the replicas again") {
			t.Errorf("a replica's log does not say the limits are shared again:\n%s", s.logs.String())
		}
	}
}

// A store that cannot be reached leaves the config unapplied, with an
// error naming its address and not its password: the old config serves.
func TestStoreUnreachableAtApply(t *testing.T) {
	srv := mcptest.StartRedis(t)
	srv.Stop()
	s := newServed(t, Options{})
	url := strings.Replace(srv.URL(), "redis://", "redis://:pw-not-shown@", 1)
	err := s.keeper.Apply(t.Context(), s.config(t, strings.NewReplacer("REDIS", url, "PREFIX", "x").Replace(storeLimited), map[string]string{"CI_TOKEN": "t"}), s.reg)
	if err == nil || !strings.Contains(err.Error(), "gateway store: the store at redis "+srv.Addr()+" does not answer") || strings.Contains(err.Error(), "pw-not-shown") {
		t.Fatalf("Apply with the store down: %v", err)
	}
	if s.keeper.Current() != nil {
		t.Error("a config whose store is down was applied")
	}
}

// The example entry of docs/operations.md §11 is valid: its store is
// the host and port its URL names, the password from its variable, and
// it advertises the replica's address from its variable.
func TestOperationsStoreExample(t *testing.T) {
	_, section, _ := strings.Cut(readFile(t, "../../docs/operations.md"), "## 11. The store")
	_, block, _ := strings.Cut(section, "```yaml\n")
	block, _, _ = strings.Cut(block, "```")
	cfg, err := decodeEntry(t, block, func(k string) (string, bool) {
		return map[string]string{"REDIS_PASSWORD": "pw", "POD_IP": "10.0.0.5"}[k], k == "REDIS_PASSWORD" || k == "POD_IP"
	})
	if err != nil {
		t.Fatalf("the example does not decode: %v", err)
	}
	if cfg.Store == nil || cfg.Store.Addr != "redis.example:6379" || cfg.Store.URL != "redis://:pw@redis.example:6379/0" || cfg.RateLimit == nil ||
		cfg.Store.Advertise != "http://10.0.0.5:7410" {
		t.Errorf("the example's config: %+v", cfg)
	}
}

// A gateway entry's rediss:// store with its CA file and server name is
// reached over TLS: applied, it answers /healthz's ping, and it is the
// store tasks are shared in, with the entry's lease (default 15s), and
// sessions' owners, with the entry's advertised address.
func TestStoreTLSApplied(t *testing.T) {
	srv := mcptest.StartRedisTLS(t)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, srv.CA, 0o600); err != nil {
		t.Fatal(err)
	}
	url := strings.Replace(srv.URL(), "127.0.0.1", "localhost", 1) // not on the certificate: serverName is
	s := newServed(t, Options{})
	if ts, _ := s.keeper.Tasks(); ts != nil {
		t.Fatal("tasks are shared before any store is configured")
	}
	if owners, _ := s.keeper.SessionOwners(); owners != nil {
		t.Fatal("sessions are shared before any store is configured")
	}
	s.apply(t, "auth: {tokens: {ci: CI_TOKEN}}\nstore: {redis: {url: '"+url+"', tls: {caFile: '"+ca+"', serverName: redis.test}}, taskLease: 2s, advertise: 'http://10.0.0.5:7410/'}\n", map[string]string{"CI_TOKEN": "t"})
	if _, err, ok := s.keeper.StoreHealth(t.Context()); !ok || err != nil {
		t.Fatalf("StoreHealth over TLS: %v %v", err, ok)
	}
	if ts, lease := s.keeper.Tasks(); ts == nil || lease != 2*time.Second {
		t.Errorf("Tasks: %v %v, want the store and 2s", ts, lease)
	}
	if owners, advertise := s.keeper.SessionOwners(); owners == nil || advertise != "http://10.0.0.5:7410" {
		t.Errorf("SessionOwners: %v %q, want the store and http://10.0.0.5:7410", owners, advertise)
	}
}

// countedBuckets counts the takes that reach the buckets it wraps.
type countedBuckets struct {
	Buckets
	takes atomic.Int32
}

func (c *countedBuckets) Take(ctx context.Context, key string, perSecond float64, burst int) (bool, time.Duration, error) {
	c.takes.Add(1)
	return c.Buckets.Take(ctx, key, perSecond, burst)
}

// A store that hangs (not refusing, but not answering) costs one wait a
// second once it failed, not one per call: when its second of rest is
// over, one call tries it again and the calls beside it use the replica's
// own buckets at once.
func TestHungStoreTriedByOneCall(t *testing.T) {
	srv := mcptest.StartRedis(t)
	r, err := store.OpenRedis(t.Context(), store.RedisOptions{URL: srv.URL(), KeyPrefix: t.Name() + ":"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	clk := &clock{t: time.Now()}
	shared := &countedBuckets{Buckets: r}
	l := newLimiter(RateLimit{Rate: 100, Burst: 100}, clk.Now)
	l.shared = shared
	srv.Freeze()
	t.Cleanup(srv.Stop)
	l.allow(t.Context(), "alice") // fails after storeWait: the store rests
	clk.Add(storeRetry)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { l.allow(t.Context(), "alice") })
	}
	wg.Wait()
	if n := shared.takes.Load(); n != 2 {
		t.Errorf("%d calls asked the hung store, want 2: the first, and one once its rest was over", n)
	}
}

// A reload that keeps the store keeps its client: a call that took the
// store before the reload (a task being written, an owner being looked
// up) goes on with it instead of failing as closed; a reload to another
// store closes the old client once replaced.
func TestReloadKeepsTheStoresClient(t *testing.T) {
	srv := mcptest.StartRedis(t)
	s := newServed(t, Options{})
	env := map[string]string{"CI_TOKEN": "ci-secret-token"}
	cfg := strings.NewReplacer("REDIS", srv.URL(), "PREFIX", t.Name()+":").Replace(storeLimited)
	s.apply(t, cfg, env)
	before, _ := s.keeper.Tasks()
	s.apply(t, strings.Replace(cfg, "3/m", "5/m", 1), env) // the limits change, the store does not
	if _, _, err := before.GetTask(t.Context(), "t"); err != nil {
		t.Errorf("a store taken before a reload that kept it: %v", err)
	}
	s.apply(t, strings.Replace(cfg, t.Name()+":", "other:", 1), env)
	if _, _, err := before.GetTask(t.Context(), "t"); err == nil {
		t.Error("the client of a store a reload replaced is still open")
	}
	if now, _ := s.keeper.Tasks(); now == before {
		t.Error("a reload to another key prefix kept the old store")
	}
}
