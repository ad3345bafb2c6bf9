package console

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/internal/tasks"
	"github.com/mcpbridge/mcpbridge/tool"
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

// Flight is one call in flight: a plain call, a task (Task set), or a
// call parked for its client's answers (see Options.Parked).
type Flight struct {
	// Method is the call's: "tools/call", gateway.MethodGetPrompt or
	// gateway.MethodReadResource. Tool is the tool's or prompt's public
	// name, or the resource's URI; Server a resource's server.
	Method, Tool, Server      string
	Identity, Session, Client string
	Started                   time.Time
	// Task is the id of the task the call runs as, "" for a call that
	// is none.
	Task string
	id   uint64
}

// flightKey is the key of a Flight's id in the context of its call.
type flightKey struct{}

// FlightKey is the key under which the contexts of the calls the Tracker
// admitted hold their Flight's id: Options.Parked is asked for it.
var FlightKey any = flightKey{}

var _ gateway.Gate = (*Tracker)(nil)

// Unwrap is the Gate the Tracker is in front of, so that the gateway
// finds what it offers besides Enter (its Screen, its shared sessions and
// tasks).
func (t *Tracker) Unwrap() gateway.Gate { return t.inner }

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
func (t *Tracker) Enter(ctx context.Context, c gateway.Call) (context.Context, func(gateway.Outcome) error, error) {
	end := func(gateway.Outcome) error { return nil }
	if t.inner != nil {
		var err error
		if ctx, end, err = t.inner.Enter(ctx, c); err != nil {
			return ctx, end, err
		}
	}
	f := &Flight{Method: cmpOr(c.Method, "tools/call"), Tool: c.Public, Server: c.Server, Identity: identityOf(ctx, c.Header),
		Session: c.Session, Client: c.Client, Started: t.now()}
	t.mu.Lock()
	t.next++
	id := t.next
	f.id = id
	t.calls[id] = f
	t.mu.Unlock()
	return context.WithValue(ctx, flightKey{}, id), func(o gateway.Outcome) error {
		t.mu.Lock()
		delete(t.calls, id)
		t.mu.Unlock()
		return end(o)
	}, nil
}

// CallContext returns a gateway.Options.CallContext that notes which
// calls run as tasks (their running context names the task) and then
// derives the context as next does (nil: the context as it is).
func (t *Tracker) CallContext(next func(context.Context, map[string]any) context.Context) func(context.Context, map[string]any) context.Context {
	return func(ctx context.Context, meta map[string]any) context.Context {
		if id, ok := ctx.Value(flightKey{}).(uint64); ok {
			if task := tasks.IDFrom(ctx); task != "" {
				t.mu.Lock()
				if f := t.calls[id]; f != nil {
					f.Task = task
				}
				t.mu.Unlock()
			}
		}
		if next == nil {
			return ctx
		}
		return next(ctx, meta)
	}
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
	Elapsed   time.Duration
	Questions int // a parked call's, unanswered
}

// trafficData is the traffic page: the calls in flight, split into plain
// calls, tasks and calls parked for their clients' answers.
type trafficData struct {
	Sessions int
	Calls    []trafficRow
	Tasks    []trafficRow
	Parked   []trafficRow
	Tracked  bool
	Charts   []toolChart
	Charted  bool // Rates are kept
}

func (c *Console) trafficPage(w http.ResponseWriter, r *http.Request, si *signin) {
	d := trafficData{Sessions: -1}
	if c.opts.Sessions != nil {
		d.Sessions = c.opts.Sessions()
	}
	sees := c.screenOf(r.Context(), si)
	if c.opts.Traffic != nil {
		d.Tracked = true
		c.flights(&d, sees)
	}
	if c.opts.Rates != nil {
		d.Charted = true
		d.Charts = c.charts(sees)
	}
	c.render(w, r, http.StatusOK, "traffic", framed(si, "traffic", "Traffic", d))
}

// charts are the charts of the tools a viewer who sees what sees lets
// through may see. The calls counted together past the charts' bound
// may be of any tool: they are charted only for a viewer who sees every
// tool the registry has.
func (c *Console) charts(sees func(gateway.Offer, string) bool) []toolChart {
	var out []toolChart
	for _, t := range c.opts.Rates.Snapshot() {
		ok := sees(gateway.OfferTool, t.Tool)
		if t.Tool == otherTools {
			ok = !slices.ContainsFunc(c.opts.Registry.List(), func(t tool.Tool) bool { return !sees(gateway.OfferTool, t.Name) })
		}
		if ok {
			out = append(out, chartOf(t))
		}
	}
	return out
}

// short trims a session or task id for display: a task id's
// "mcpbridge.REPLICA." start, the same for every task of a replica, is
// left out.
func short(s string) string {
	s = gateway.Untagged(s)
	if len(s) > 12 {
		return s[:12] + "…"
	}
	return strings.TrimSpace(s)
}

// flights sorts the calls in flight the viewer may see (of the tools,
// prompts and resources sees lets through) into d: parked
// (Options.Parked names them), tasks, and the rest.
func (c *Console) flights(d *trafficData, sees func(gateway.Offer, string) bool) {
	parked := map[uint64]int{}
	if c.opts.Parked != nil {
		for _, p := range c.opts.Parked(FlightKey) {
			if id, ok := p.Value.(uint64); ok {
				parked[id] = p.Questions
			}
		}
	}
	now := c.now()
	for _, f := range c.opts.Traffic.Flights() {
		if !seesCall(sees, f.Method, f.Tool, f.Server) {
			continue
		}
		row := trafficRow{Flight: f, Elapsed: now.Sub(f.Started).Round(time.Millisecond)}
		q, isParked := parked[f.id]
		switch {
		case isParked:
			row.Questions = q
			d.Parked = append(d.Parked, row)
		case f.Task != "":
			d.Tasks = append(d.Tasks, row)
		default:
			d.Calls = append(d.Calls, row)
		}
	}
}
