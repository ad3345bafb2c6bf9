package tool

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// unsubscribeTimeout bounds the unsubscribe sent when a resource's last
// subscriber leaves (nobody waits for it).
const unsubscribeTimeout = 5 * time.Second

// subKey is one subscribed resource.
type subKey struct{ server, uri string }

// subscription is the subscribers of one resource; the server is asked
// once, on the first.
type subscription struct {
	listeners map[*listener]struct{}
}

// listener is one subscriber's callback.
type listener struct{ fn func(uri string) }

// SubscribeResource asks server for update notifications of uri and calls
// fn with the URI on each one until cancel (idempotent) is called. The
// server is asked once however many subscribe, and told to stop when the
// last one cancels. fn runs on the producer's goroutine: it must not block.
func (r *Registry) SubscribeResource(ctx context.Context, server, uri string, fn func(uri string)) (cancel func(), err error) {
	o, err := r.offerOf(server)
	if err != nil {
		return nil, err
	}
	if o.Subscribe == nil {
		return nil, fmt.Errorf("server %q: resource subscriptions are %w", server, ErrUnsupported)
	}
	key, l := subKey{server, uri}, &listener{fn: fn}
	r.mu.Lock()
	sub, known := r.subs[key]
	if !known {
		if r.subs == nil {
			r.subs = make(map[subKey]*subscription)
		}
		sub = &subscription{listeners: make(map[*listener]struct{})}
		r.subs[key] = sub
	}
	sub.listeners[l] = struct{}{}
	r.mu.Unlock()
	cancel = sync.OnceFunc(func() { r.unsubscribe(key, l) })
	if !known {
		if err := o.Subscribe(ctx, uri); err != nil {
			r.forget(key, l)
			return nil, err
		}
	}
	return cancel, nil
}

// forget removes l from key's subscription and reports whether it was the
// last one (the subscription is then gone).
func (r *Registry) forget(key subKey, l *listener) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	sub := r.subs[key]
	if sub == nil {
		return false
	}
	delete(sub.listeners, l)
	if len(sub.listeners) > 0 {
		return false
	}
	delete(r.subs, key)
	return true
}

// unsubscribe removes l, and tells the server when it was the last.
func (r *Registry) unsubscribe(key subKey, l *listener) {
	if !r.forget(key, l) {
		return
	}
	if o, err := r.offerOf(key.server); err == nil && o.Unsubscribe != nil {
		ctx, cancel := context.WithTimeout(context.Background(), unsubscribeTimeout)
		defer cancel()
		_ = o.Unsubscribe(ctx, key.uri) // best effort: the server may be gone
	}
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
