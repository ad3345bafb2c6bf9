package store_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/store"
)

// Two clients of one server (two replicas) share a bucket: together they
// get its burst, not twice it, and a refusal says how long to wait.
func TestRedisBucketShared(t *testing.T) {
	srv := mcptest.StartRedis(t)
	ctx := t.Context()
	var calls, errs atomic.Int32
	observe := func(_ string, err error) {
		calls.Add(1)
		if err != nil {
			errs.Add(1)
		}
	}
	a := open(t, store.RedisOptions{URL: srv.URL(), Observe: observe})
	b := open(t, store.RedisOptions{URL: srv.URL()})
	taken := 0
	for i := range 10 {
		s := a
		if i%2 == 1 {
			s = b
		}
		ok, wait, err := s.Take(ctx, "alice", 1.0/60, 4) // 1/m: nothing refills during the test
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			taken++
		} else if wait < 50*time.Second || wait > 60*time.Second {
			t.Errorf("a refusal says wait %v, want about a minute", wait)
		}
	}
	if taken != 4 {
		t.Errorf("two replicas took %d tokens of a bucket of 4", taken)
	}
	if ok, _, _ := b.Take(ctx, "bob", 1.0/60, 4); !ok {
		t.Error("bob's bucket is emptied by alice's calls")
	}
	other := open(t, store.RedisOptions{URL: srv.URL(), KeyPrefix: "other:"})
	if ok, _, _ := other.Take(ctx, "alice", 1.0/60, 4); !ok {
		t.Error("another key prefix shares alice's bucket")
	}
	if calls.Load() < 6 || errs.Load() != 0 {
		t.Errorf("observed %d calls and %d errors, want a ping and 5 takes, no error", calls.Load(), errs.Load())
	}
}

// A server that cannot be reached at start fails with its host and port
// and never the password; one lost later makes Take fail (the caller falls
// back) and come back by itself with the server.
func TestRedisUnreachable(t *testing.T) {
	srv := mcptest.StartRedis(t)
	url := strings.Replace(srv.URL(), "redis://", "redis://:s3cret-pw@", 1)
	srv.Stop()
	_, err := store.OpenRedis(t.Context(), store.RedisOptions{URL: url})
	if err == nil || !strings.Contains(err.Error(), srv.Addr()) || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("an unreachable store: %v; want its address %s and no password", err, srv.Addr())
	}
	srv.Start()
	r := open(t, store.RedisOptions{URL: srv.URL()})
	srv.Stop()
	if _, _, err := r.Take(t.Context(), "alice", 10, 1); err == nil || !strings.Contains(err.Error(), srv.Addr()) {
		t.Fatalf("Take with the server gone: %v, want an error naming %s", err, srv.Addr())
	}
	if err := r.DropOwnerIf(t.Context(), "s", "http://a"); err == nil || !strings.Contains(err.Error(), srv.Addr()) {
		t.Fatalf("DropOwnerIf with the server gone: %v, want an error naming %s", err, srv.Addr())
	}
	srv.Start()
	mcptest.Eventually(t, 10*time.Second, func() bool {
		_, _, err := r.Take(context.Background(), "alice", 10, 1)
		return err == nil
	}, "Take to work again once the server is back")
}

// A URL that is not a Redis one is refused without being printed whole.
func TestRedisBadURL(t *testing.T) {
	_, err := store.OpenRedis(t.Context(), store.RedisOptions{URL: "http://user:pw@example.com/x"})
	if err == nil || strings.Contains(err.Error(), "pw") {
		t.Fatalf("an http URL: %v", err)
	}
}

func open(t *testing.T, opts store.RedisOptions) *store.Redis {
	t.Helper()
	r, err := store.OpenRedis(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// A server that hangs holds a call no longer than the caller's context:
// the caller falls back on time.
func TestRedisHungServerHonoursContext(t *testing.T) {
	srv := mcptest.StartRedis(t)
	r := open(t, store.RedisOptions{URL: srv.URL()})
	srv.Freeze()
	defer srv.Thaw()
	// The deadline is a tenth of the store's own read timeout (500 ms),
	// which alone would end the call otherwise: which of the two ended
	// it is the question, not how fast the machine is.
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := r.Take(ctx, "alice", 10, 1)
	if took := time.Since(start); err == nil || took >= 500*time.Millisecond {
		t.Fatalf("Take on a hung server: %v after %v, want an error at the context's deadline (50ms)", err, took)
	}
}

// A rediss:// store is reached over TLS with the CA given, and by the
// server name given when the URL's host is not on the certificate; a
// server whose certificate the CA does not sign, or a CA on a plain
// redis:// URL, is refused, saying which.
func TestRedisTLS(t *testing.T) {
	srv := mcptest.StartRedisTLS(t)
	r := open(t, store.RedisOptions{URL: srv.URL(), CA: srv.CA})
	if ok, _, err := r.Take(t.Context(), "alice", 10, 1); err != nil || !ok {
		t.Fatalf("Take over TLS: %v %v", ok, err)
	}
	byName := strings.Replace(srv.URL(), "127.0.0.1", "localhost", 1) // not on the certificate
	open(t, store.RedisOptions{URL: byName, CA: srv.CA, ServerName: "redis.test"})
	if _, err := store.OpenRedis(t.Context(), store.RedisOptions{URL: byName, CA: srv.CA}); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a host not on the certificate: %v", err)
	}
	other := mcptest.StartRedisTLS(t)
	if _, err := store.OpenRedis(t.Context(), store.RedisOptions{URL: srv.URL(), CA: other.CA}); err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Errorf("a CA that did not sign the server's certificate: %v", err)
	}
	if _, err := store.OpenRedis(t.Context(), store.RedisOptions{URL: strings.Replace(srv.URL(), "rediss:", "redis:", 1), CA: srv.CA}); err == nil || !strings.Contains(err.Error(), "needs a rediss:// url") {
		t.Errorf("a CA on a redis:// url: %v", err)
	}
}
