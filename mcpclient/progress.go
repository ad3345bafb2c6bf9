package mcpclient

import (
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcpbridge/mcpbridge/tool"
)

// progressRoutes maps the progress tokens of one connection's calls in
// flight to their callbacks.
type progressRoutes struct {
	next   atomic.Int64
	mu     sync.Mutex
	routes map[int64]tool.ProgressFunc
}

// add registers fn and returns its token and a function that removes it.
func (p *progressRoutes) add(fn tool.ProgressFunc) (int64, func()) {
	tok := p.next.Add(1)
	p.mu.Lock()
	if p.routes == nil {
		p.routes = make(map[int64]tool.ProgressFunc)
	}
	p.routes[tok] = fn
	p.mu.Unlock()
	return tok, func() {
		p.mu.Lock()
		delete(p.routes, tok)
		p.mu.Unlock()
	}
}

// notified routes a notifications/progress the connection read to the
// callback of its token; other notifications are the SDK's business.
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
	tok := int64(f)
	p.mu.Lock()
	fn := p.routes[tok]
	p.mu.Unlock()
	if fn != nil {
		fn(tool.Progress{Progress: n.Progress, Total: n.Total, Message: n.Message})
	}
}
