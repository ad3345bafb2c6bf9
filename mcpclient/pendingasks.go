package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/mcpbridge/mcpbridge/tool"
)

// maxPendingAsks bounds a server's requests waiting for a consumer's
// answer at once: a server that sends thousands of them (or a consumer
// that never answers) would otherwise hold a goroutine and the request
// for each until the call ends.
const maxPendingAsks = 16

// errTooManyAsks refuses a request over maxPendingAsks.
var errTooManyAsks = errors.New("too many of the server's requests wait for an answer")

// pendingAsks counts a server's requests put to a consumer and not yet
// answered. The zero value is ready to use.
type pendingAsks struct {
	n        atomic.Int32
	refusing atomic.Bool // the last request was refused: log only the first of a run
}

// consult puts a to fn, the consumer of the call the request belongs to,
// unless maxPendingAsks wait already. fn is handed the call's context
// (ended, when not nil: its values say whose call it is, so a gateway puts
// the question to that call's client, on its stream), else the request's
// ctx. The request waits at most the server's toolCallTimeoutMs, and ends
// when the server's request ends (ctx), that call returns, or the server
// is closed, whatever the consumer does.
func (s *Server) consult(ctx context.Context, fn tool.AskFunc, ended context.Context, a tool.Ask) (json.RawMessage, error) {
	if s.asks.n.Add(1) > maxPendingAsks {
		s.asks.n.Add(-1)
		if !s.asks.refusing.Swap(true) {
			s.log.Warn("server requests refused: too many wait for an answer", "method", a.Method, "limit", maxPendingAsks)
		}
		return nil, fmt.Errorf("server %q: %w (the bridge's limit is %d)", s.cfg.ServerName, errTooManyAsks, maxPendingAsks)
	}
	s.asks.refusing.Store(false)
	defer s.asks.n.Add(-1)
	base := ctx
	if ended != nil {
		base = ended
	}
	askCtx, cancel := context.WithTimeout(base, s.cfg.ToolCallTimeout)
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)()
	defer context.AfterFunc(ctx, cancel)()
	return fn(askCtx, a)
}
