package tool

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// unsubscribeTimeout bounds the unsubscribe sent when a resource's last
// subscriber leaves, and the subscribe that renews a subscription with a
// successor (nobody waits for either).
const unsubscribeTimeout = 5 * time.Second

// subKey is one subscribed resource.
type subKey struct{ server, uri string }

// subscription is the subscribers of one resource; the server is asked
// once, on the first.
type subscription struct {
	listeners map[*listener]struct{}
	// asked is the source whose server holds the subscription; a
	// successor taking the server over is asked again.
	asked *Source
	// settled is closed once the server answered the subscribe; err is
	// its refusal, set before.
	settled chan struct{}
	err     error
}

// listener is one subscriber's callback.
type listener struct{ fn func(uri string) }

// SubscribeResource asks server for update notifications of uri and calls
// fn with the URI on each one until cancel (idempotent) is called. The
// server is asked once however many subscribe, told to stop when the last
// one cancels (cancel returns once it answered, at most 5 s later), and
// asked again when a successor source takes it over; a refusal from a
// source a successor took over meanwhile is asked of the successor. fn
// runs on the producer's goroutine: it must not block.
//
// Each resource's subscribe and unsubscribe reach its server in order (a
// subscribe waits for the unsubscribe before it), so the registry never
// believes in a subscription the server does not hold; no lock is held
// across a call to a server, so one slow server stalls only its own
// resources.
func (r *Registry) SubscribeResource(ctx context.Context, server, uri string, fn func(uri string)) (cancel func(), err error) {
	key, l := subKey{server, uri}, &listener{fn: fn}
	for {
		// The server is looked up at each turn (it may have been taken
		// over), and in the step that joins: a successor publishing meanwhile
		// either is the one asked, or finds the subscription to renew.
		h, sub, first, leaving, err := r.join(key, l)
		if err != nil {
			return nil, err
		}
		if first {
			r.ask(ctx, h.offer, key, sub, leaving)
		}
		select {
		case <-sub.settled:
		case <-ctx.Done():
			r.leave(key, sub, l)
			return nil, ctx.Err()
		}
		if sub.err == nil {
			return sync.OnceFunc(func() { r.leave(key, sub, l) }), nil
		}
		if first && (ctx.Err() != nil || r.servedBy(server, h.src)) {
			return nil, sub.err
		}
		// Joined a subscription the server refused, or the refusal was a
		// predecessor's: ask again.
	}
}

// servedBy reports whether src publishes server now.
func (r *Registry) servedBy(server string, src *Source) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	h := r.servers[server]
	return h != nil && h.src == src
}

// join adds l to key's subscription, made (first) when there is none and
// asked of h, the handle publishing key's server now; leaving is the
// unsubscribe of key on its way, nil when none is.
func (r *Registry) join(key subKey, l *listener) (h *Handle, sub *subscription, first bool, leaving <-chan struct{}, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h, err = r.serverHandleLocked(key.server); err != nil {
		return nil, nil, false, nil, err
	}
	if h.offer.Subscribe == nil {
		return nil, nil, false, nil, fmt.Errorf("server %q: resource subscriptions are %w", key.server, ErrUnsupported)
	}
	sub = r.subs[key]
	if sub == nil {
		if r.subs == nil {
			r.subs = make(map[subKey]*subscription)
		}
		sub = &subscription{listeners: make(map[*listener]struct{}), asked: h.src, settled: make(chan struct{})}
		r.subs[key] = sub
		first = true
	}
	sub.listeners[l] = struct{}{}
	return h, sub, first, r.leaving[key], nil
}

// ask sends the subscribe of sub, once the unsubscribe leaving (if any)
// was answered, and settles sub with the answer; a refused subscription is
// forgotten.
func (r *Registry) ask(ctx context.Context, o *Offer, key subKey, sub *subscription, leaving <-chan struct{}) {
	var err error
	if leaving != nil {
		select {
		case <-leaving:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	if err == nil {
		err = o.Subscribe(ctx, key.uri)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	sub.err = err
	if err != nil && r.subs[key] == sub {
		delete(r.subs, key)
	}
	close(sub.settled)
}

// serverHandleLocked returns the handle publishing server; r.mu must be
// held.
func (r *Registry) serverHandleLocked(server string) (*Handle, error) {
	h := r.servers[server]
	if h == nil {
		return nil, fmt.Errorf("%w %q offers resources or prompts", ErrNoServer, server)
	}
	return h, nil
}

// leave removes l from sub, key's subscription, and when it was the last
// one of a subscription the server holds, tells the server (outside any
// lock) before a new subscribe of key may go.
func (r *Registry) leave(key subKey, sub *subscription, l *listener) {
	r.mu.Lock()
	delete(sub.listeners, l)
	last := len(sub.listeners) == 0 && r.subs[key] == sub
	var done chan struct{}
	if last {
		delete(r.subs, key)
		done = make(chan struct{})
		if r.leaving == nil {
			r.leaving = make(map[subKey]chan struct{})
		}
		r.leaving[key] = done
	}
	r.mu.Unlock()
	if !last {
		return
	}
	defer func() {
		r.mu.Lock()
		if r.leaving[key] == done {
			delete(r.leaving, key)
		}
		r.mu.Unlock()
		close(done)
	}()
	// A subscriber that gives up waiting leaves a subscribe in flight:
	// its answer decides whether there is anything to undo.
	<-sub.settled
	if sub.err != nil {
		return
	}
	if o, err := r.offerOf(key.server); err == nil && o.Unsubscribe != nil {
		ctx, cancel := context.WithTimeout(context.Background(), unsubscribeTimeout)
		defer cancel()
		_ = o.Unsubscribe(ctx, key.uri) // best effort: the server may be gone
	}
}

// renewSubscriptions asks src's server for the subscriptions another
// source of the same server held (src took it over), in the background,
// until src closes. src.mu must be held.
func (r *Registry) renewSubscriptions(src *Source, o *Offer) {
	if o == nil || o.Subscribe == nil {
		return
	}
	r.mu.RLock()
	stale := false
	for key, sub := range r.subs {
		stale = stale || key.server == o.Server && sub.asked != src
	}
	r.mu.RUnlock()
	if !stale {
		return
	}
	if src.renewCtx == nil {
		src.renewCtx, src.stopRenew = context.WithCancel(context.Background())
	}
	life := src.renewCtx
	src.renewals.Go(func() {
		var uris []string
		r.mu.Lock()
		for key, sub := range r.subs {
			if key.server == o.Server && sub.asked != src {
				sub.asked = src
				uris = append(uris, key.uri)
			}
		}
		r.mu.Unlock()
		for _, uri := range uris {
			ctx, cancel := context.WithTimeout(life, unsubscribeTimeout)
			_ = o.Subscribe(ctx, uri) // best effort, as a reconnect's
			cancel()
		}
	})
}

// ResourceUpdated tells the subscribers of uri, a resource of the source's
// server, that it changed. A no-op when nobody subscribed.
func (s *Source) ResourceUpdated(uri string) {
	s.mu.Lock()
	h := s.handle
	s.mu.Unlock()
	if h == nil || h.offer == nil {
		return
	}
	s.r.notifyUpdated(subKey{h.offer.Server, uri})
}

// notifyUpdated calls key's subscribers.
func (r *Registry) notifyUpdated(key subKey) {
	r.mu.RLock()
	var fns []func(string)
	if sub := r.subs[key]; sub != nil {
		for l := range sub.listeners {
			fns = append(fns, l.fn)
		}
	}
	r.mu.RUnlock()
	for _, fn := range fns {
		fn(key.uri)
	}
}
