package tool

import (
	"context"
	"errors"
	"sync"
)

// ErrSuperseded is returned by Publish on a Source whose successor has taken
// its place, or that was closed.
var ErrSuperseded = errors.New("tool source was superseded or closed")

// Source is the registration of one producer of tools (one MCP server, one
// Go plugin) in a registry: Publish atomically replaces its tools with a new
// set, Close removes them. A Source can be handed on: Successor returns a
// new Source whose first Publish replaces this one's tools in the same
// atomic swap, so a restarted producer takes over without its tools ever
// vanishing (make before break). All methods are safe for concurrent use.
type Source struct {
	r *Registry

	mu         sync.Mutex
	handle     *Handle // the tools now registered; nil before the first Publish
	prev       *Source // taken over on the first Publish; nil after
	superseded bool    // a successor took over, or Close ran

	// renewals are the subscribes renewing, on this source's server, the
	// subscriptions a predecessor held; Close cancels (renewCtx) and
	// waits for them.
	renewals  sync.WaitGroup
	renewCtx  context.Context    // guarded by mu; nil before the first renewal
	stopRenew context.CancelFunc // guarded by mu
}

// NewSource returns an empty Source of r.
func (r *Registry) NewSource() *Source { return &Source{r: r} }

// Registry returns the registry the source publishes into.
func (s *Source) Registry() *Registry { return s.r }

// Successor returns a new Source of the same registry that takes s's place
// on its first successful Publish: s's tools (as they are then) are
// replaced by the successor's in one swap, and s becomes inert (Publish
// fails with ErrSuperseded, Close is a no-op). Until then s works as
// before, and closing the successor leaves s untouched.
func (s *Source) Successor() *Source { return &Source{r: s.r, prev: s} }

// Publish replaces the source's tools with tools in one atomic swap and one
// change notification (taking over its predecessor's on the first call).
// On error nothing changes; errors are as for Registry.Register, or
// ErrSuperseded.
func (s *Source) Publish(tools ...Tool) error {
	return s.publish(Offer{Tools: tools})
}

func (s *Source) publish(o Offer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.superseded {
		return ErrSuperseded
	}
	old := s.handle
	prev := s.prev
	if prev != nil {
		// Lock order: a successor before its predecessor, never the reverse.
		prev.mu.Lock()
		defer prev.mu.Unlock()
		if !prev.superseded {
			old = prev.handle
		}
	}
	h, err := s.r.replaceOffer(old, o, s)
	if err != nil {
		return err
	}
	s.handle = h
	if prev != nil {
		prev.superseded, prev.handle = true, nil
		s.prev = nil
	}
	s.r.renewSubscriptions(s, h.offer)
	return nil
}

// Clear removes the source's tools; it may Publish again later. The tools
// go in the same step as the handle (under s.mu): a successor publishing
// meanwhile finds either this source's tools to take over, or none.
func (s *Source) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handle.Unregister()
	s.handle = nil
}

// Close removes the source's tools for good: later Publish calls fail with
// ErrSuperseded. A predecessor that was never taken over keeps its tools.
// Close is idempotent.
func (s *Source) Close() {
	s.mu.Lock()
	s.handle.Unregister() // as Clear: with the handle, not after it
	s.handle, s.prev, s.superseded = nil, nil, true
	stop := s.stopRenew
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	s.renewals.Wait()
}

// Names returns the names of the source's tools in publication order.
func (s *Source) Names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.handle.Names()
}

// Len returns the number of the source's tools.
func (s *Source) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handle == nil {
		return 0
	}
	return len(s.handle.names)
}
