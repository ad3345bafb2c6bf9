package mcpclient

import (
	"context"
	"sync"
	"time"
)

// callBook keeps a generation's calls in flight ordered by deadline, with
// one timer armed for the earliest, and ends them all when the generation
// ends. A call thus costs no runtime timer of its own (a new earliest
// timer wakes a sleeping thread, a spinning M for a timeout that almost
// never fires) and no registration among the generation context's
// children.
//
// One book per generation, not per Server: it ends with its generation,
// so nothing outlives a reconnect. All its calls have the same timeout (a
// Server's Config never changes: a reload starts a new Server), and a
// deadline is taken under the book's lock from the monotonic clock, so
// appending a call keeps the list in deadline order. The list is doubly
// linked: a call leaves in O(1).
type callBook struct {
	timeout time.Duration

	mu         sync.Mutex
	head, tail *bookedCall
	timer      *time.Timer // nil until first armed
	armed      time.Time   // when timer fires; zero when it is not set
	ended      error       // the generation's cause, once it ended
}

// bookedCall is one call in a book, cancelled by cancel.
type bookedCall struct {
	book       *callBook
	cancel     context.CancelCauseFunc
	deadline   time.Time
	prev, next *bookedCall
	booked     bool // in the book's list
}

func newCallBook(timeout time.Duration) *callBook {
	return &callBook{timeout: timeout}
}

// enter books a call from now to the book's timeout. A call entering an
// ended book is cancelled with the generation's cause at once.
func (b *callBook) enter(cancel context.CancelCauseFunc) *bookedCall {
	c := &bookedCall{book: b, cancel: cancel}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended != nil {
		cancel(b.ended)
		return c
	}
	c.deadline = time.Now().Add(b.timeout)
	b.push(c)
	// A set timer is set for a call booked before, so no later than this
	// one's deadline: the fire re-arms for whoever is earliest then.
	if b.armed.IsZero() {
		b.arm(c.deadline)
	}
	return c
}

// leave ends c: it leaves the book (if a fire or the generation's end
// has not taken it out already) and its context is released. The timer is
// left as it is: a fire that finds no call due only re-arms.
func (c *bookedCall) leave() {
	b := c.book
	b.mu.Lock()
	if c.booked {
		b.unlink(c)
	}
	b.mu.Unlock()
	c.cancel(errCallDone)
}

// fire cancels every call past its deadline and re-arms for the earliest
// left.
func (b *callBook) fire() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.armed = time.Time{}
	now := time.Now()
	for b.head != nil && !b.head.deadline.After(now) {
		c := b.head
		b.unlink(c)
		c.cancel(errCallTimeout)
	}
	if b.head != nil {
		b.arm(b.head.deadline)
	}
}

// end cancels every call in the book with cause, the generation's, as
// well as any call that enters later. The first cause stays.
func (b *callBook) end(cause error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended != nil {
		return
	}
	b.ended = cause
	for b.head != nil {
		c := b.head
		b.unlink(c)
		c.cancel(cause)
	}
	if b.timer != nil {
		b.timer.Stop()
	}
	b.armed = time.Time{}
}

func (b *callBook) arm(deadline time.Time) {
	b.armed = deadline
	if b.timer == nil {
		b.timer = time.AfterFunc(time.Until(deadline), b.fire)
		return
	}
	b.timer.Reset(time.Until(deadline))
}

func (b *callBook) push(c *bookedCall) {
	c.booked = true
	c.prev = b.tail
	if b.tail != nil {
		b.tail.next = c
	} else {
		b.head = c
	}
	b.tail = c
}

func (b *callBook) unlink(c *bookedCall) {
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		b.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		b.tail = c.prev
	}
	c.prev, c.next, c.booked = nil, nil, false
}
