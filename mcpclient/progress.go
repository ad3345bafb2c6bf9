package mcpclient

import (
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcpbridge/mcpbridge/internal/textcut"
	"github.com/mcpbridge/mcpbridge/tool"
)

// progressRoutes maps the progress tokens of one connection's calls in
// flight to their routes.
type progressRoutes struct {
	next   atomic.Int64
	mu     sync.Mutex
	routes map[int64]*progressRoute // guarded by mu
}

// maxPendingProgress bounds the notifications of one call waiting for its
// consumer; past it each new one replaces the newest waiting (progress is
// a state: the latest wins).
const maxPendingProgress = 64

// progressRoute hands one call's progress to its callback. The
// connection's reader only queues: a slow consumer (a terminal, a gateway
// client) must not stall the results of every call on the connection,
// and a flood must not grow memory. One goroutine at a time hands the
// queue to fn, in order.
type progressRoute struct {
	fn      tool.ProgressFunc
	pending []tool.Progress // guarded by progressRoutes.mu
	handing chan struct{}   // closed when the running hand-off ends; nil when none runs; guarded by progressRoutes.mu
}

// add registers fn and returns its token and a function that removes it
// once every notification queued for it has been handed to fn: a call's
// progress comes before its result.
func (p *progressRoutes) add(fn tool.ProgressFunc) (int64, func()) {
	tok := p.next.Add(1)
	r := &progressRoute{fn: fn}
	p.mu.Lock()
	if p.routes == nil {
		p.routes = make(map[int64]*progressRoute)
	}
	p.routes[tok] = r
	p.mu.Unlock()
	return tok, func() {
		p.mu.Lock()
		delete(p.routes, tok)
		handing := r.handing
		p.mu.Unlock()
		if handing != nil {
			<-handing
		}
	}
}

// offer queues n for r and starts a hand-off unless one runs. p.mu must
// be held.
func (p *progressRoutes) offer(r *progressRoute, n tool.Progress) {
	if len(r.pending) < maxPendingProgress {
		r.pending = append(r.pending, n)
	} else {
		r.pending[len(r.pending)-1] = n
	}
	if r.handing == nil {
		r.handing = make(chan struct{})
		go p.hand(r, r.handing)
	}
}

// hand gives r's queued notifications to its callback until none is left.
func (p *progressRoutes) hand(r *progressRoute, done chan struct{}) {
	defer close(done)
	for {
		p.mu.Lock()
		batch := r.pending
		r.pending = nil
		if len(batch) == 0 {
			r.handing = nil
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		for _, n := range batch {
			r.fn(n)
		}
	}
}

// maxNoticeBytes bounds the message of a progress notification and the
// data of a log message that the bridge queues, logs and passes on: a
// server could send megabytes in each, dozens of them queued per call.
const maxNoticeBytes = 4 << 10

// notified routes a notifications/progress the connection read to the
// route of its token, its message cut to maxNoticeBytes; other
// notifications are the SDK's business.
func (p *progressRoutes) notified(method string, params json.RawMessage) {
	if method != "notifications/progress" {
		return
	}
	var n struct {
		Token    json.RawMessage `json:"progressToken"`
		Progress float64         `json:"progress"`
		Total    float64         `json:"total"`
		Message  string          `json:"message"`
	}
	if json.Unmarshal(params, &n) != nil {
		return
	}
	f, err := strconv.ParseFloat(string(n.Token), 64)
	if err != nil || f != float64(int64(f)) {
		return // not one of ours: the bridge's tokens are integers
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if r := p.routes[int64(f)]; r != nil {
		p.offer(r, tool.Progress{Progress: n.Progress, Total: n.Total, Message: textcut.Marked(n.Message, maxNoticeBytes, "…")})
	}
}
