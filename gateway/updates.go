package gateway

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// updateQueue holds the resource updates the registry reported and the
// SDK has yet to send, for the one goroutine the Gateway owns to send
// them (sendUpdates): the producer, a backend's notification, never waits
// for the client sessions. A URI is queued once however often it changes
// before it is sent, so the queue holds at most the subscribed URIs.
type updateQueue struct {
	mu      sync.Mutex
	pending []string        // guarded by mu
	queued  map[string]bool // the URIs in pending; guarded by mu
	wake    chan struct{}   // a value when pending may be non-empty
}

func newUpdateQueue() *updateQueue {
	return &updateQueue{queued: map[string]bool{}, wake: make(chan struct{}, 1)}
}

// add queues uri. It never blocks.
func (q *updateQueue) add(uri string) {
	q.mu.Lock()
	if !q.queued[uri] {
		q.queued[uri] = true
		q.pending = append(q.pending, uri)
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// drain takes every queued URI.
func (q *updateQueue) drain() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.pending
	q.pending = nil
	clear(q.queued)
	return out
}

// sendUpdates sends the queued updates to the sessions that subscribed,
// until Close.
func (g *Gateway) sendUpdates(ctx context.Context) {
	defer close(g.updatesDone)
	for {
		select {
		case <-g.updates.wake:
			for _, uri := range g.updates.drain() {
				if err := g.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
					g.log.Debug("resource update not sent", "uri", uri, "err", err)
				}
			}
		case <-ctx.Done():
			return
		}
	}
}

// dropSubscriptions cancels the gateway's registry subscriptions (each
// tells its server, best effort, bounded by the registry) and waits for
// them. New ones are refused from now on (subscribe checks isClosed).
func (g *Gateway) dropSubscriptions() {
	g.syncMu.Lock()
	subs := g.offers.subs
	g.offers.subs = nil
	g.syncMu.Unlock()
	var wg sync.WaitGroup
	for _, cancel := range subs {
		wg.Go(cancel)
	}
	wg.Wait()
}
