package mcptest

import (
	"testing"
	"time"
)

// HandClock is a clock whose waits the test ends by hand. Code under test
// that takes an After func (the stdio shutdown ladder, for one) gets
// [HandClock.After]; each wait it starts is handed to [HandClock.Next] and
// lasts until the test calls its Fire. A wait never fired never ends.
// Safe for concurrent use.
type HandClock struct{ waits chan *HandWait }

// HandWait is one wait started on a HandClock: D is how long the code
// asked to wait.
type HandWait struct {
	D    time.Duration
	fire chan time.Time
}

// Fire ends the wait, as if D had passed.
func (w *HandWait) Fire() { w.fire <- time.Now() }

// NewHandClock returns a HandClock with room for 64 waits not yet taken by
// Next, more than any test here starts.
func NewHandClock() *HandClock { return &HandClock{waits: make(chan *HandWait, 64)} }

// After starts a wait of d; its channel delivers once the test fires it.
func (c *HandClock) After(d time.Duration) <-chan time.Time {
	w := &HandWait{D: d, fire: make(chan time.Time, 1)}
	c.waits <- w
	return w.fire
}

// Next returns the next wait started, waiting for one up to 30 s before it
// fails the test.
func (c *HandClock) Next(t testing.TB) *HandWait {
	t.Helper()
	select {
	case w := <-c.waits:
		return w
	case <-time.After(30 * time.Second):
		t.Fatal("mcptest.HandClock: no wait started within 30 s")
		return nil
	}
}

// Started returns a wait started and not yet taken by Next, if any.
func (c *HandClock) Started() (*HandWait, bool) {
	select {
	case w := <-c.waits:
		return w, true
	default:
		return nil, false
	}
}
