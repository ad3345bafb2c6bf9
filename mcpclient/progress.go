package mcpclient

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ProgressFunc receives the progress notifications a server sends for one
// tool call: progress so far, the total when known (else 0), and an
// optional message.
type ProgressFunc func(progress, total float64, message string)

type progressKey struct{}

// WithProgress returns a context whose tool calls ask the server for
// progress (a progress token) and forward each notification to fn, on the
// connection's notification goroutine: fn must not block.
func WithProgress(ctx context.Context, fn ProgressFunc) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

func progressFrom(ctx context.Context) ProgressFunc {
	fn, _ := ctx.Value(progressKey{}).(ProgressFunc)
	return fn
}

// progressRoutes maps the progress tokens of one connection's calls in
// flight to their callbacks.
type progressRoutes struct {
	next   atomic.Int64
	mu     sync.Mutex
	routes map[int64]ProgressFunc
}

// add registers fn and returns its token and a function that removes it.
func (p *progressRoutes) add(fn ProgressFunc) (int64, func()) {
	tok := p.next.Add(1)
	p.mu.Lock()
	if p.routes == nil {
		p.routes = make(map[int64]ProgressFunc)
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
		fn(req.Params.Progress, req.Params.Total, req.Params.Message)
	}
}
