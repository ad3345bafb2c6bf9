package store

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// maxBuckets bounds the keys whose buckets Memory remembers; full buckets
// are forgotten first.
const maxBuckets = 10_000

// Memory is token buckets in the process, one per key. The zero value is
// not usable; make one with NewMemory. Safe for concurrent use.
type Memory struct {
	now func() time.Time

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

// NewMemory returns empty buckets read with the clock now (nil:
// time.Now).
func NewMemory(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now, buckets: map[string]*rate.Limiter{}}
}

// Take takes a token of key's bucket, which refills at perSecond and holds
// burst; when there is none it returns how long until there is. A refused
// call takes nothing: it never queues. A key keeps the rate and burst it
// was first taken with. It never fails.
func (m *Memory) Take(_ context.Context, key string, perSecond float64, burst int) (bool, time.Duration, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.buckets[key]
	if !ok {
		m.makeRoom(now)
		b = rate.NewLimiter(rate.Limit(perSecond), burst)
		m.buckets[key] = b
	}
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d, nil
	}
	return true, 0, nil
}

// makeRoom forgets full buckets (they hold nothing a new one would not),
// then any, once maxBuckets are remembered. m.mu must be held.
func (m *Memory) makeRoom(now time.Time) {
	if len(m.buckets) < maxBuckets {
		return
	}
	for k, b := range m.buckets {
		if b.TokensAt(now) >= float64(b.Burst()) {
			delete(m.buckets, k)
		}
	}
	for k := range m.buckets {
		if len(m.buckets) < maxBuckets {
			return
		}
		delete(m.buckets, k)
	}
}
