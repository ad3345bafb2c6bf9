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
}

// listener is one subscriber's callback.
type listener struct{ fn func(uri string) }

// SubscribeResource asks server for update notifications of uri and calls
// fn with the URI on each one until cancel (idempotent) is called. The
// server is asked once however many subscribe, told to stop when the last
// one cancels, and asked again when a successor source takes it over. fn
// runs on the producer's goroutine: it must not block.
func (r *Registry) SubscribeResource(ctx context.Context, server, uri string, fn func(uri string)) (cancel func(), err error) {
	// The server's subscribe and unsubscribe calls run one at a time, so a
	// refused subscribe or a late unsubscribe never leaves the registry
	// believing in a subscription the server does not hold.
	r.subCalls.Lock()
	defer r.subCalls.Unlock()
	h, err := r.serverHandle(server)
	if err != nil {
		return nil, err
	}
	o := h.offer
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
		sub = &subscription{listeners: make(map[*listener]struct{}), asked: h.src}
		r.subs[key] = sub
	}
	sub.listeners[l] = struct{}{}
	r.mu.Unlock()
	if !known {
		if err := o.Subscribe(ctx, uri); err != nil {
			r.forget(key, l)
			return nil, err
		}
	}
	return sync.OnceFunc(func() { r.unsubscribe(key, l) }), nil
}

// serverHandle returns the handle publishing server.
func (r *Registry) serverHandle(server string) (*Handle, error) {
	r.mu.RLock()
	h := r.servers[server]
	r.mu.RUnlock()
	if h == nil {
		return nil, fmt.Errorf("%w %q offers resources or prompts", ErrNoServer, server)
	}
	return h, nil
}

// forget removes l from key's subscription and reports whether it was the
// last one (the subscription is then gone).
func (r *Registry) forget(key subKey, l *listener) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	sub := r.subs[key]
	delete(sub.listeners, l)
	if len(sub.listeners) > 0 {
		return false
	}
	delete(r.subs, key)
	return true
}

// unsubscribe removes l, and tells the server when it was the last.
func (r *Registry) unsubscribe(key subKey, l *listener) {
	r.subCalls.Lock()
	defer r.subCalls.Unlock()
	if !r.forget(key, l) {
		return
	}
	if o, err := r.offerOf(key.server); err == nil && o.Unsubscribe != nil {
		ctx, cancel := context.WithTimeout(context.Background(), unsubscribeTimeout)
		defer cancel()
		_ = o.Unsubscribe(ctx, key.uri) // best effort: the server may be gone
	}
}

// renewSubscriptions asks src's server for the subscriptions another
// source of the same server held (src took it over), in the background.
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
	go func() {
		r.subCalls.Lock()
		defer r.subCalls.Unlock()
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
			ctx, cancel := context.WithTimeout(context.Background(), unsubscribeTimeout)
			_ = o.Subscribe(ctx, uri) // best effort, as a reconnect's
			cancel()
		}
	}()
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
