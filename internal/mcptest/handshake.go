package mcptest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HoldHandshake makes srv call hold before it answers the MCP handshake:
// initialize, or server/discover for clients that probe it first. With it
// a test makes a server slow to start ([Sleep]), hang in initialize
// ([Hang]), or start in step with others ([Barrier]). If hold returns an
// error, the handshake fails with it. ctx is the request's: it ends when
// the client cancels or its connection closes.
func HoldHandshake(srv *mcp.Server, hold func(ctx context.Context) error) {
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "initialize" || method == "server/discover" {
				if err := hold(ctx); err != nil {
					return nil, err
				}
			}
			return next(ctx, method, req)
		}
	})
}

// Sleep returns a hold that waits d, or until its request is cancelled.
func Sleep(d time.Duration) func(context.Context) error {
	return func(ctx context.Context) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Hang returns a hold that never lets the handshake through: it waits
// until its request is cancelled or release is closed (a test closes it in
// a cleanup, so nothing outlives the test), then fails the handshake.
func Hang(release <-chan struct{}) func(context.Context) error {
	return func(ctx context.Context) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-release:
			return fmt.Errorf("mcptest: the hanging handshake was released")
		}
	}
}

// Barrier holds each handshake until n of them have arrived, then lets
// them all through. Servers that share a Barrier can only finish starting
// if a client starts them concurrently: a sequential client would wait on
// the first one forever. Arrived reports how many have arrived so far.
type Barrier struct {
	n       int
	mu      sync.Mutex
	arrived int
	all     chan struct{}
}

// NewBarrier returns a Barrier for n handshakes.
func NewBarrier(n int) *Barrier { return &Barrier{n: n, all: make(chan struct{})} }

// Hold is the hold function to pass to HoldHandshake.
func (b *Barrier) Hold(ctx context.Context) error {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.n {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Arrived is the number of handshakes that reached the barrier.
func (b *Barrier) Arrived() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.arrived
}
