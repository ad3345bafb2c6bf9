package gateway

import (
	"sync"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
)

// pending counts operations that have not ended yet, so a closer can wait
// until none is left. The zero value is ready to use.
type pending struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed when n drops to 0; nil unless someone waits
	shut bool          // enter refuses; set by close
}

func (p *pending) add() {
	p.mu.Lock()
	p.n++
	p.mu.Unlock()
}

// enter reports whether close has not been called and, if so and count,
// adds an operation: one the closer's wait sees (checked and counted
// under one lock, so none slips between the check and the wait).
func (p *pending) enter(count bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.shut && count {
		p.n++
	}
	return !p.shut
}

// close makes enter refuse from now on; add still counts.
func (p *pending) close() {
	p.mu.Lock()
	p.shut = true
	p.mu.Unlock()
}

func (p *pending) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n--
	if p.n == 0 && p.zero != nil {
		close(p.zero)
		p.zero = nil
	}
}

// waitUntil runs wait and reports whether it returned before deadline;
// if not, it is left to return in the background.
func waitUntil(deadline time.Time, wait func()) bool {
	done := make(chan struct{})
	go func() {
		wait()
		close(done)
	}()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-done:
		return true
	case <-timer.C:
		return false
	}
}

// wait waits until no operation is left or deadline passes, and returns
// how many are left.
func (p *pending) wait(deadline time.Time) int {
	p.mu.Lock()
	if p.n == 0 {
		p.mu.Unlock()
		return 0
	}
	if p.zero == nil {
		p.zero = make(chan struct{})
	}
	zero := p.zero
	p.mu.Unlock()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-zero:
		return 0
	case <-timer.C:
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.n
	}
}

// trackedTransport is the transport ServeTransport serves a session on: it
// tells the gateway which of the session's tools/call requests still await
// their reply on the wire (the SDK's session Close drops replies not yet
// written, so a graceful shutdown waits for them first).
type trackedTransport = sdkwire.CountingTransport
