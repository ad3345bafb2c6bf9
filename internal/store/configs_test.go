package store_test

import (
	"maps"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/store"
)

// Each replica's config digest is read by the others until it lapses
// (its replica stopped renewing it) or is dropped; a replica that records
// another digest replaces its own, and another key prefix (another
// gateway) sees none of them.
func TestRedisReplicaConfigs(t *testing.T) {
	srv := mcptest.StartRedis(t)
	ctx := t.Context()
	a := open(t, store.RedisOptions{URL: srv.URL()})
	b := open(t, store.RedisOptions{URL: srv.URL()})
	read := func(r *store.Redis, tag, digest string, ttl time.Duration) map[string]string {
		t.Helper()
		live, err := r.PutReplicaConfig(ctx, tag, digest, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return live
	}
	read(a, "A", "d1", 300*time.Millisecond)
	if got, want := read(b, "B", "d1", time.Minute), map[string]string{"A": "d1", "B": "d1"}; !maps.Equal(got, want) {
		t.Errorf("read through another replica: %v, want %v", got, want)
	}
	if got, want := read(b, "B", "d2", time.Minute), map[string]string{"A": "d1", "B": "d2"}; !maps.Equal(got, want) {
		t.Errorf("B's config changed: %v, want %v (one record per replica)", got, want)
	}
	other := open(t, store.RedisOptions{URL: srv.URL(), KeyPrefix: "other:"})
	if got := read(other, "C", "d3", time.Minute); len(got) != 1 {
		t.Errorf("another prefix reads %v, want its own record alone", got)
	}
	time.Sleep(400 * time.Millisecond)
	if got, want := read(b, "B", "d2", time.Minute), map[string]string{"B": "d2"}; !maps.Equal(got, want) {
		t.Errorf("A's record past its ttl: %v, want %v", got, want)
	}
	read(a, "A", "d1", time.Minute)
	if err := a.DropReplicaConfig(ctx, "A"); err != nil {
		t.Fatal(err)
	}
	if got, want := read(b, "B", "d2", time.Minute), map[string]string{"B": "d2"}; !maps.Equal(got, want) {
		t.Errorf("A's record dropped: %v, want %v", got, want)
	}
}
