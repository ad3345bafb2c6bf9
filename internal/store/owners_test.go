package store_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/store"
)

// A session's owner recorded by one replica is read by another until it
// is dropped; two replicas that ask for the secret get the same one, and
// another key prefix (another gateway) gets another.
func TestRedisOwners(t *testing.T) {
	srv := mcptest.StartRedis(t)
	ctx := t.Context()
	a := open(t, store.RedisOptions{URL: srv.URL()})
	b := open(t, store.RedisOptions{URL: srv.URL()})
	settle(t, a)
	if err := a.PutOwners(ctx, []string{"s1", "s2"}, "http://10.0.0.1:8080", time.Minute); err != nil {
		t.Fatal(err)
	}
	if owner, ok, err := b.Owner(ctx, "s1"); err != nil || !ok || owner != "http://10.0.0.1:8080" {
		t.Errorf("Owner(s1) through another replica = %q, %v, %v", owner, ok, err)
	}
	if err := a.DropOwners(ctx, []string{"s1"}); err != nil {
		t.Fatal(err)
	}
	if owner, ok, err := b.Owner(ctx, "s1"); err != nil || ok {
		t.Errorf("Owner(s1) after it was dropped = %q, %v, %v; want none", owner, ok, err)
	}
	if _, ok, _ := b.Owner(ctx, "s2"); !ok {
		t.Error("dropping s1 dropped s2")
	}
	// A drop of an owner that moved meanwhile leaves the new record.
	if err := b.DropOwnerIf(ctx, "s2", "http://10.0.0.9:8080"); err != nil {
		t.Fatal(err)
	}
	if owner, ok, _ := b.Owner(ctx, "s2"); !ok || owner != "http://10.0.0.1:8080" {
		t.Errorf("dropping s2 of another owner left %q, %v; want it kept", owner, ok)
	}
	if err := b.DropOwnerIf(ctx, "s2", "http://10.0.0.1:8080"); err != nil {
		t.Fatal(err)
	}
	if owner, ok, _ := b.Owner(ctx, "s2"); ok {
		t.Errorf("dropping s2 of its owner left %q", owner)
	}
	sa, err := a.ReplicaSecret(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := b.ReplicaSecret(ctx)
	if err != nil || !bytes.Equal(sa, sb) || len(sa) != 32 {
		t.Errorf("two replicas' secrets: %x and %x (%v), want one of 32 bytes", sa, sb, err)
	}
	other := open(t, store.RedisOptions{URL: srv.URL(), KeyPrefix: "other:"})
	if so, _ := other.ReplicaSecret(ctx); bytes.Equal(so, sa) {
		t.Error("another key prefix shares the replicas' secret")
	}
}

// An owner record lapses when its replica stops renewing it.
func TestRedisOwnerLapses(t *testing.T) {
	srv := mcptest.StartRedis(t)
	ctx := t.Context()
	a := open(t, store.RedisOptions{URL: srv.URL()})
	if err := a.PutOwners(ctx, []string{"s"}, "http://a", 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	mcptest.Eventually(t, 5*time.Second, func() bool {
		_, ok, _ := a.Owner(ctx, "s")
		return !ok
	}, "the record to lapse")
}

// settle has r's store begin holding records, and waits until they are
// whole (their first ttl passed).
func settle(t *testing.T, r *store.Redis) {
	t.Helper()
	if err := r.PutOwners(t.Context(), []string{"first"}, "http://first", 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	mcptest.Eventually(t, 5*time.Second, func() bool {
		_, _, err := r.Owner(t.Context(), "nobody")
		return err == nil
	}, "the store's records to settle")
}

// A store that restarted empty does not say a name is unowned until its
// owners had a record's ttl to write their records again: before that, a
// name without a record is ErrOwnersSettling (its replica answers 503, not
// 404, and the client keeps its session).
func TestRedisOwnersSettleAfterAnEmptyRestart(t *testing.T) {
	srv := mcptest.StartRedis(t)
	r := open(t, store.RedisOptions{URL: srv.URL()})
	if _, ok, err := r.Owner(t.Context(), "s"); ok || !errors.Is(err, store.ErrOwnersSettling) {
		t.Fatalf("Owner in a store that never held records = %v, %v; want ErrOwnersSettling", ok, err)
	}
	settle(t, r)
	srv.Stop()
	srv.Start() // empty
	mcptest.Eventually(t, 10*time.Second, func() bool {
		_, ok, err := r.Owner(context.Background(), "s")
		return !ok && errors.Is(err, store.ErrOwnersSettling)
	}, "a name without a record in the restarted store to be settling")
	if err := r.PutOwners(t.Context(), []string{"s"}, "http://a", time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := r.Owner(t.Context(), "other"); ok || !errors.Is(err, store.ErrOwnersSettling) {
		t.Errorf("Owner right after the first record of the restarted store = %v, %v; want ErrOwnersSettling for a record's ttl", ok, err)
	}
	if owner, ok, err := r.Owner(t.Context(), "s"); !ok || err != nil || owner != "http://a" {
		t.Errorf("Owner of a name written again = %q, %v, %v", owner, ok, err)
	}
	// A name that ends meanwhile, or whose owner is found gone, is known
	// to be unowned: its client is told so (404), not to send it again.
	if err := r.PutOwners(t.Context(), []string{"ended", "dead"}, "http://a", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := r.DropOwners(t.Context(), []string{"ended"}); err != nil {
		t.Fatal(err)
	}
	if err := r.DropOwnerIf(t.Context(), "dead", "http://elsewhere"); err != nil {
		t.Fatal(err)
	}
	if owner, ok, err := r.Owner(t.Context(), "dead"); !ok || err != nil || owner != "http://a" {
		t.Errorf("Owner of a name dropped for another owner = %q, %v, %v; want its record kept", owner, ok, err)
	}
	if err := r.DropOwnerIf(t.Context(), "dead", "http://a"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ended", "dead"} {
		if owner, ok, err := r.Owner(t.Context(), name); ok || err != nil {
			t.Errorf("Owner of %s, dropped while the store settles = %q, %v, %v; want unowned", name, owner, ok, err)
		}
	}
	if _, ok, err := r.Owner(t.Context(), "other"); ok || !errors.Is(err, store.ErrOwnersSettling) {
		t.Errorf("Owner of a name never dropped = %v, %v; still settling", ok, err)
	}
}
