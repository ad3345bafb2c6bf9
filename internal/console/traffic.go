package console

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpbridge/mcpbridge/gateway"
)

// Tracker is a gateway.Gate that keeps the calls its inner Gate admitted
// until they end, for the traffic page. Safe for concurrent use.
type Tracker struct {
	inner gateway.Gate
	now   func() time.Time
	mu    sync.Mutex
	next  uint64
	calls map[uint64]*Flight
}

// Flight is one call in flight.
type Flight struct {
	Identity, Tool, Session, Client string
	Started                         time.Time
}

var _ gateway.Gate = (*Tracker)(nil)

// NewTracker returns a Tracker in front of inner (nil: every call
// admitted); now nil means time.Now.
func NewTracker(inner gateway.Gate, now func() time.Time) *Tracker {
	if now == nil {
		now = time.Now
	}
	return &Tracker{inner: inner, now: now, calls: map[uint64]*Flight{}}
}

// Enter implements gateway.Gate: the inner Gate decides; an admitted call
// is kept until its end.
func (t *Tracker) Enter(ctx context.Context, c gateway.Call) (context.Context, func(gateway.Outcome), error) {
	end := func(gateway.Outcome) {}
	if t.inner != nil {
		var err error
		if ctx, end, err = t.inner.Enter(ctx, c); err != nil {
			return ctx, end, err
		}
	}
	f := &Flight{Identity: identityOf(ctx, c.Header), Tool: c.Public, Session: c.Session, Client: c.Client, Started: t.now()}
	t.mu.Lock()
	t.next++
	id := t.next
	t.calls[id] = f
	t.mu.Unlock()
	return ctx, func(o gateway.Outcome) {
		t.mu.Lock()
		delete(t.calls, id)
		t.mu.Unlock()
		end(o)
	}, nil
}

// identityOf is who a call is from as the gateway authenticated it; the
// header is never shown (it holds the token).
func identityOf(ctx context.Context, h http.Header) string {
	if id := gateway.IdentityOf(ctx); id != "" {
		return id
	}
	if h == nil {
		return "stdio"
	}
	return "anonymous"
}

// Flights returns the calls in flight, oldest first.
func (t *Tracker) Flights() []Flight {
	t.mu.Lock()
	out := make([]Flight, 0, len(t.calls))
	for _, f := range t.calls {
		out = append(out, *f)
	}
	t.mu.Unlock()
	slices.SortFunc(out, func(a, b Flight) int { return a.Started.Compare(b.Started) })
	return out
}

// trafficRow is a call in flight as the page shows it.
type trafficRow struct {
	Flight
	Elapsed time.Duration
}

type trafficData struct {
	Sessions int
	Calls    []trafficRow
	Tracked  bool
	Charts   []toolChart
	Charted  bool // Rates are kept
}

func (c *Console) trafficPage(w http.ResponseWriter, r *http.Request, si *signin) {
	d := trafficData{Sessions: -1}
	if c.opts.Sessions != nil {
		d.Sessions = c.opts.Sessions()
	}
	if c.opts.Traffic != nil {
		d.Tracked = true
		now := c.now()
		for _, f := range c.opts.Traffic.Flights() {
			d.Calls = append(d.Calls, trafficRow{Flight: f, Elapsed: now.Sub(f.Started).Round(time.Millisecond)})
		}
	}
	if c.opts.Rates != nil {
		d.Charted = true
		for _, t := range c.opts.Rates.Snapshot() {
			d.Charts = append(d.Charts, chartOf(t))
		}
	}
	c.render(w, r, http.StatusOK, "traffic", framed(si, "traffic", "Traffic", d))
}

// short trims a session id for display.
func short(s string) string {
	if len(s) > 12 {
		return s[:12] + "…"
	}
	return strings.TrimSpace(s)
}
