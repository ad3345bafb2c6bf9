package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
)

// answeredBeforeReady lists the requests served before the backends are
// ready: the handshake of either protocol generation (initialize, or
// server/discover and the subscriptions/listen stream a 2026-07-28 client
// opens as it connects), liveness, and notifications, so a client connects
// at once.
func answeredBeforeReady(method string) bool {
	switch method {
	case "initialize", "server/discover", "subscriptions/listen", "ping":
		return true
	}
	return strings.HasPrefix(method, "notifications/")
}

// awaitReady holds a request until the backends' first start has settled
// (Options.Ready), at most Options.ReadyTimeout, or until ctx ends; then it
// brings the served tool list up to date with the registry, so the
// request sees every tool registered by then. It reports false when ctx
// ended first.
func (g *Gateway) awaitReady(ctx context.Context, method string) bool {
	if answeredBeforeReady(method) {
		return true
	}
	if !g.waitReady(ctx) {
		return false
	}
	if g.reg.Version() != g.syncedVersion.Load() {
		g.sync()
	}
	return true
}

// awaitReadyOn is awaitReady for a request of session that arrived on an
// HTTP request stream: header's stream tag, else stream (a task's call
// keeps the stream of the request that made it; "" off HTTP), read only
// when the request waits. While it waits it is tracked as a call in
// flight (awaitOn), so that its client leaving, its session's end or
// Close ends the wait as it would end a call: a request whose client
// left is not served for no one once the backends are ready, however
// long their first start takes. It returns why the wait ended first; nil
// once ready.
func (g *Gateway) awaitReadyOn(ctx context.Context, session *mcp.ServerSession, header http.Header, stream, method string) error {
	if answeredBeforeReady(method) || !g.holds() || g.isReady() {
		if !g.awaitReady(ctx, method) {
			return context.Cause(ctx)
		}
		return nil
	}
	ctx, end := g.awaitOn(ctx, session, cmp.Or(first(header, streamHeader), stream))
	defer end()
	// Close ends the wait (g.done) and then cancels ctx (cancelCalls): a
	// request that finds both ended ends, however the select chose.
	if !g.awaitReady(ctx, method) || ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

// heldUntilReady is body, the answer to req of session that a take
// gives beneath the SDK's session, run once awaitReadyOn lets it go on,
// as the requests the SDK's session serves do (middleware): without the
// wait it would answer from the registry as it is before the backends'
// first start, empty. Like them it is the session's activity and the
// Observer's (seen): else a session that only lists skills looks idle.
func (g *Gateway) heldUntilReady(session *mcp.ServerSession, req *jsonrpc.Request, body sdkwire.TakenCall) sdkwire.TakenCall {
	header, method := headerOf(req), req.Method
	return g.seenFirst(session, method, func(ctx context.Context) (json.RawMessage, error) {
		if err := g.awaitReadyOn(ctx, session, header, "", method); err != nil {
			return nil, err
		}
		return body(ctx)
	})
}

// seenFirst is body, a request of method on session that a take answers
// beneath the SDK's session, run once the request is seen: the session's
// activity and the Observer's, as each request the SDK serves is
// (middleware).
func (g *Gateway) seenFirst(session *mcp.ServerSession, method string, body sdkwire.TakenCall) sdkwire.TakenCall {
	return func(ctx context.Context) (json.RawMessage, error) {
		g.seen(ctx, session, method)
		return body(ctx)
	}
}

// holds reports whether requests wait for Options.Ready.
func (g *Gateway) holds() bool { return g.opts.Ready != nil && g.opts.ReadyTimeout >= 0 }

// waitReady waits for Options.Ready as awaitReady does.
func (g *Gateway) waitReady(ctx context.Context) bool {
	if !g.holds() {
		return true
	}
	ready := g.opts.Ready
	select {
	case <-ready:
		return true
	default:
	}
	var timeout <-chan time.Time
	if g.opts.ReadyTimeout > 0 {
		t := time.NewTimer(time.Until(g.readyBy))
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-ready:
	case <-timeout:
	case <-g.done:
	case <-ctx.Done():
		return false
	}
	return true
}

// isReady reports whether the backends' first start has settled, or the
// ready timeout has passed.
func (g *Gateway) isReady() bool {
	if g.opts.Ready == nil {
		return true
	}
	select {
	case <-g.opts.Ready:
		return true
	default:
		return g.opts.ReadyTimeout > 0 && !time.Now().Before(g.readyBy)
	}
}
