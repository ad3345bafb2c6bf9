package gatewayauth

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// maxLimiters bounds the identities (or identity and tool pairs) whose
// buckets are remembered; full buckets are forgotten first.
const maxLimiters = 10_000

// limiter is one token bucket per key. Safe for concurrent use.
type limiter struct {
	cfg RateLimit
	now func() time.Time

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

func newLimiter(cfg RateLimit, now func() time.Time) *limiter {
	return &limiter{cfg: cfg, now: now, buckets: map[string]*rate.Limiter{}}
}

// allow takes a token of key's bucket; when there is none it returns how
// long until there is. A refused call takes nothing: it never queues.
func (l *limiter) allow(key string) (bool, time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		l.makeRoom(now)
		b = rate.NewLimiter(rate.Limit(l.cfg.Rate), l.cfg.Burst)
		l.buckets[key] = b
	}
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// makeRoom forgets full buckets (they hold nothing a new one would not),
// then any, once maxLimiters are remembered.
func (l *limiter) makeRoom(now time.Time) {
	if len(l.buckets) < maxLimiters {
		return
	}
	for k, b := range l.buckets {
		if b.TokensAt(now) >= float64(l.cfg.Burst) {
			delete(l.buckets, k)
		}
	}
	for k := range l.buckets {
		if len(l.buckets) < maxLimiters {
			return
		}
		delete(l.buckets, k)
	}
}
