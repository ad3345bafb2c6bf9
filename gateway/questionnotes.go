//lint:file-ignore SA1019 MCP 2026-07-28 deprecates logging (SEP-2577) but keeps it working for at least a year; the bridge carries it.

package gateway

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A parked call outlives the request that started it: each round of
// questions is a request of its own, and in stateless mode a session of
// its own too. Its progress and log messages go to the request waiting on
// it now, under that request's progress token and log level, and are
// dropped while none waits: the client is then between rounds, and a
// queue kept for it would grow as long as the backend talks.

// relay is a parked call's notifier: it hands each notification to the
// request waiting on the call, if any. The zero value drops them. Safe
// for concurrent use.
type relay struct {
	mu  sync.Mutex
	now *waiter // guarded by mu; nil while no request waits
}

// waiter is a request waiting on a parked call.
type waiter struct {
	ctx   context.Context // the request's handling: the SDK routes by it
	to    notifier        // its session, or a taken 2026-07-28 call's peer
	token any             // its progress token; nil drops progress
}

var _ notifier = (*relay)(nil)

// waitedOnBy makes the request handled under ctx, which sends to to and
// named token its progress token, the one the call's notifications go
// to, and returns the function that ends that when the request stops
// waiting.
func (r *relay) waitedOnBy(ctx context.Context, to notifier, token any) func() {
	if to == nil {
		return func() {} // untested: a call without a session (direct tests)
	}
	w := &waiter{ctx: ctx, to: to, token: token}
	r.mu.Lock()
	r.now = w
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.now == w {
			r.now = nil
		}
	}
}

// notifierOf is where the request req's notifications go: a taken
// 2026-07-28 call's peer, else its session; nil without either.
func notifierOf(req callRequest) notifier {
	switch {
	case req.peer != nil:
		return req.peer
	case req.session != nil:
		return req.session
	}
	return nil
}

// current is the request waiting now, nil when none does.
func (r *relay) current() *waiter {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.now
}

// NotifyProgress sends p under the waiting request's own token.
func (r *relay) NotifyProgress(_ context.Context, p *mcp.ProgressNotificationParams) error {
	w := r.current()
	if w == nil || w.token == nil {
		return nil
	}
	sent := *p
	sent.ProgressToken = w.token
	return w.to.NotifyProgress(w.ctx, &sent)
}

// Log sends m to the waiting request, at the log level it asked for.
func (r *relay) Log(_ context.Context, m *mcp.LoggingMessageParams) error {
	w := r.current()
	if w == nil {
		return nil
	}
	return w.to.Log(w.ctx, m)
}
