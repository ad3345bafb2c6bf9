package mcpclient

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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

// deliver is the client's ProgressNotificationHandler.
func (p *progressRoutes) deliver(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	var tok int64
	switch v := req.Params.ProgressToken.(type) {
	case float64:
		tok = int64(v)
	case int64:
		tok = v
	case int:
		tok = int64(v)
	default:
		return // not one of ours
	}
	p.mu.Lock()
	fn := p.routes[tok]
	p.mu.Unlock()
	if fn != nil {
		fn(tool.Progress{Progress: req.Params.Progress, Total: req.Params.Total, Message: req.Params.Message})
	}
}
