package store_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/store"
)

// What one call's admission costs: a token from the process's buckets,
// or from a Redis on the same machine (one script round trip).
func BenchmarkTake(b *testing.B) {
	srv := mcptest.StartRedis(b)
	r, err := store.OpenRedis(context.Background(), store.RedisOptions{URL: srv.URL()})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	for _, c := range []struct {
		name string
		take func(context.Context, string, float64, int) (bool, time.Duration, error)
	}{
		{"memory", store.NewMemory(nil).Take},
		{"redis", r.Take},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			i := 0
			for b.Loop() {
				i++
				if _, _, err := c.take(ctx, "id"+strconv.Itoa(i%100), 1e6, 1000); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
