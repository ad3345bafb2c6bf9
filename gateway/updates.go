package gateway

import (
	"context"
	"net/http"
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

// resourceUpdated is the notification an update is sent as.
const resourceUpdated = "notifications/resources/updated"

// keepSubscriber keeps what the caller subscribing ss to uri may see, for
// its updates (mayUpdate), when a Screen decides; called once the
// subscription is made (a listen whose subscription failed is not
// unsubscribed by the SDK). It keeps it for a session the gateway holds
// state of, whose end lets it go, and for a subscriptions/listen's, which
// the SDK unsubscribes as the listen ends; a one-request session's
// subscription ends with its request, before any update.
func (g *Gateway) keepSubscriber(ctx context.Context, ss *mcp.ServerSession, uri string, may func(Offer, string) bool) {
	if _, ok := gateAs[Screen](g.gate); !ok || ss == nil {
		return
	}
	_, listening := ctx.Value(listenHeaderKey{}).(http.Header)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stateLocked(ss) == nil && !listening {
		return
	}
	subs := g.subscribers[ss]
	if subs == nil {
		subs = map[string]func(Offer, string) bool{}
		g.subscribers[ss] = subs
	}
	subs[uri] = may
}

// forgetSubscriber lets go of what keepSubscriber kept for ss and uri.
func (g *Gateway) forgetSubscriber(ss *mcp.ServerSession, uri string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if subs := g.subscribers[ss]; subs != nil {
		delete(subs, uri)
		if len(subs) == 0 {
			delete(g.subscribers, ss)
		}
	}
}

// mayUpdate reports whether req, a resource update, may go to its
// session: always without a Screen; with one, only while the caller that
// subscribed may still see the resource's server, by the policy in force
// now (the Screen decides by the policy current when asked), so a reload
// that hides a resource stops its updates to those it is hidden from.
func (g *Gateway) mayUpdate(req mcp.Request) bool {
	if _, ok := gateAs[Screen](g.gate); !ok {
		return true
	}
	p, _ := req.GetParams().(*mcp.ResourceUpdatedNotificationParams)
	ss, _ := req.GetSession().(*mcp.ServerSession)
	if p == nil || ss == nil {
		return false
	}
	g.mu.Lock()
	may := g.subscribers[ss][p.URI]
	g.mu.Unlock()
	g.syncMu.Lock()
	server, _, known := g.servedAt(p.URI)
	g.syncMu.Unlock()
	return may != nil && known && may(OfferResource, server)
}
