package gatewayauth

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/store"
)

// Buckets are token buckets, kept in the process (store.Memory) or shared
// by the gateway's replicas (store.Redis). Take takes a token of key's
// bucket, which refills at perSecond and holds burst, or says how long
// until there is one; an error means the buckets could not say.
type Buckets interface {
	Take(ctx context.Context, key string, perSecond float64, burst int) (ok bool, wait time.Duration, err error)
}

var (
	_ Buckets = (*store.Memory)(nil)
	_ Buckets = (*store.Redis)(nil)
)

// Bounds on the shared buckets' cost to a call: a store that does not
// answer within storeWait is down; a down store is tried again by one
// call after storeRetry, so an outage costs one wait per storeRetry, not
// one per call.
const (
	storeWait  = 250 * time.Millisecond
	storeRetry = time.Second
)

// limiter applies a RateLimit per key. With shared buckets, the limit
// holds across the replicas sharing them; while they fail, each replica
// falls back to its own buckets with the full limit (docs/operations.md:
// an outage of the store lets an identity reach N times its limit across
// N replicas, as without a store, rather than refusing every call). Safe
// for concurrent use.
type limiter struct {
	cfg    RateLimit
	local  *store.Memory
	shared Buckets // nil: local only
	now    func() time.Time
	log    *slog.Logger
	// fellBack counts a call decided by the local buckets because the
	// shared ones failed; a metric, never nil.
	fellBack func()

	retryAt atomic.Int64 // unix nanoseconds until which the store is not tried; 0 while it answers
}

func newLimiter(cfg RateLimit, now func() time.Time) *limiter {
	return &limiter{cfg: cfg, local: store.NewMemory(now), now: now, log: slog.New(slog.DiscardHandler), fellBack: func() {}}
}

// allow takes a token of key's bucket; when there is none it returns how
// long until there is. A refused call takes nothing: it never queues.
func (l *limiter) allow(ctx context.Context, key string) (bool, time.Duration) {
	if l.shared != nil {
		if ok, wait, err := l.takeShared(ctx, key); err == nil {
			return ok, wait
		}
		l.fellBack()
	}
	ok, wait, _ := l.local.Take(ctx, key, l.cfg.Rate, l.cfg.Burst) // Memory never fails
	return ok, wait
}

// takeShared asks the shared buckets, unless they failed less than
// storeRetry ago; it logs when they fail and when they answer again.
func (l *limiter) takeShared(ctx context.Context, key string) (bool, time.Duration, error) {
	now := l.now().UnixNano()
	retry := l.retryAt.Load()
	if retry != 0 && (now < retry || !l.retryAt.CompareAndSwap(retry, now+int64(storeRetry))) {
		// Resting, or another call took the one try past the rest: a
		// hung store must not hold every call arriving meanwhile.
		return false, 0, errStoreResting
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeWait)
	defer cancel()
	ok, wait, err := l.shared.Take(ctx, key, l.cfg.Rate, l.cfg.Burst)
	if err != nil {
		if l.retryAt.Swap(now+int64(storeRetry)) == 0 {
			l.log.Warn("gateway store: rate limits fall back to this replica's own buckets (the full limit each) until the store answers again", "error", err)
		}
		return false, 0, err
	}
	if l.retryAt.Swap(0) != 0 {
		l.log.Info("gateway store: answering again; rate limits are shared by the replicas again")
	}
	return ok, wait, nil
}

type restingError struct{}

func (restingError) Error() string { return "the store failed less than a second ago" }

var errStoreResting error = restingError{}
