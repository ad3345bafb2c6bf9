package codemode

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// HolderView is a View that tells apart whose programs run: a gateway's,
// whose callers are identities (else client addresses). Holder names the
// caller of ctx, "" for one it cannot name. No named holder's programs
// take more than their share of the programs' processes while another's
// wait, so one caller's flood of endless loops cannot starve the others.
type HolderView interface {
	View
	Holder(ctx context.Context) string
}

// holderOf names the caller of ctx as view tells them apart; "" when it
// does not.
func holderOf(ctx context.Context, view View) string {
	if hv, ok := view.(HolderView); ok {
		return hv.Holder(ctx)
	}
	return ""
}

// slots bounds the programs' processes running at once in this process:
// each may grow its heap by MaxMemory and keep a core busy for its whole
// time limit. One named holder holds at most share of them, so another
// holder's program finds a place while one holder floods; the unnamed
// holder ("", a view that tells no callers apart) is one caller, bound by
// size alone. Waiters are served first come, first served among those
// under their share.
type slots struct {
	mu      sync.Mutex
	size    int
	used    int
	held    map[string]int
	waiting []*slotWaiter // in arrival order
}

type slotWaiter struct {
	holder string
	ready  chan struct{} // closed once the place is the waiter's
}

func newSlots(size int) *slots { return &slots{size: size, held: map[string]int{}} }

// share is how many places one named holder may hold: half, at least one.
func (s *slots) share() int { return max(1, s.size/2) }

// fits reports whether holder may take a place now; s.mu is held.
func (s *slots) fits(holder string) bool {
	return s.used < s.size && (holder == "" || s.held[holder] < s.share())
}

// take gives holder a place; s.mu is held.
func (s *slots) take(holder string) {
	s.used++
	s.held[holder]++
}

// acquire waits for a place for holder until ctx ends or until the
// program's deadline passes, and returns the function that gives it back.
func (s *slots) acquire(ctx context.Context, holder string, deadline time.Time) (func(), error) {
	s.mu.Lock()
	if s.fits(holder) {
		s.take(holder)
		s.mu.Unlock()
		return func() { s.release(holder) }, nil
	}
	w := &slotWaiter{holder: holder, ready: make(chan struct{})}
	s.waiting = append(s.waiting, w)
	s.mu.Unlock()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	var err error
	select {
	case <-w.ready:
		return func() { s.release(holder) }, nil
	case <-ctx.Done():
		err = &Error{Err: causeOf(ctx), Message: "the program was cancelled while it waited to start: " + causeOf(ctx).Error()}
	case <-timer.C:
		err = s.busy(holder)
	}
	if s.leave(w) {
		s.release(holder) // granted as it gave up
	}
	return nil, err
}

// busy is the error of a program whose time limit passed before it found
// a place.
func (s *slots) busy(holder string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	mine := ""
	if holder != "" {
		mine = fmt.Sprintf(", %d of them by this caller, who may hold %d at once", s.held[holder], s.share())
	}
	return &Error{Err: ErrBusy, Message: fmt.Sprintf("%v (%d of %d in use%s) for the whole of its time limit; retry when fewer programs run",
		ErrBusy, s.used, s.size, mine)}
}

// leave takes w out of the queue, and reports whether it was granted a
// place meanwhile (which it must give back).
func (s *slots) leave(w *slotWaiter) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, q := range s.waiting {
		if q == w {
			s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
			return false
		}
	}
	return true
}

// release gives back holder's place, to the first waiter that fits.
func (s *slots) release(holder string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used--
	if s.held[holder]--; s.held[holder] <= 0 {
		delete(s.held, holder)
	}
	for i, w := range s.waiting {
		if s.fits(w.holder) {
			s.take(w.holder)
			s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
			close(w.ready)
			return
		}
	}
}

// running is how many places are taken.
func (s *slots) running() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}
