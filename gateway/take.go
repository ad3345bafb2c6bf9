package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/internal/serverwire"
)

// The take of tools/call on stdio-like sessions (ServeStdio,
// ServeTransport). The go-sdk's server decodes a request's params twice
// with a fresh 32 KiB decoder each time, hands the request through two
// goroutines, and marshals the result twice over; for the one request a
// gateway serves most, the gateway answers on the connection itself
// (sdkwire.TakingTransport) and runs the one call path (serveCall), with
// the same bytes on the wire as the SDK's path. Everything else stays with the SDK: the handshake, every
// other method, notifications, responses to the gateway's own requests,
// and the calls whose shape or session the take does not take (see
// take).

// take returns the body that answers req beneath the SDK's session, or
// nil to leave req to the SDK: anything but tools/call; a session not
// (yet) opened with initialize below protocol 2026-07-28, where the SDK
// adds to results (sdkwire.TakesCalls); params of a shape the lean reader
// leaves to the SDK; a name the gateway does not serve (the SDK's path
// answers it). The body is the one call path, serveCall, as on the SDK's
// path.
func (g *Gateway) take(session *atomic.Pointer[mcp.ServerSession]) func(*jsonrpc.Request) sdkwire.TakenCall {
	return func(req *jsonrpc.Request) sdkwire.TakenCall {
		ss := session.Load()
		if req.Method != "tools/call" || ss == nil || !sdkwire.TakesCalls(ss) {
			return nil
		}
		p, ok := serverwire.ReadCallParams(req.Params)
		if !ok {
			return nil
		}
		if _, ok := (*g.callable.Load())[p.Name]; !ok {
			return nil
		}
		params := &mcp.CallToolParamsRaw{Meta: p.Meta, Name: p.Name, Arguments: p.Arguments}
		var header http.Header // an HTTP transport's request headers, for the Gate
		if extra, ok := req.Extra.(*mcp.RequestExtra); ok {
			header = extra.Header
		}
		return func(ctx context.Context) (json.RawMessage, error) {
			cancel, _ := sdkwire.CallCancel(ctx)
			res, err := g.serveCall(ctx, callRequest{session: ss, header: header, params: params, cancel: cancel})
			if err != nil {
				return nil, err
			}
			return serverwire.CallResultJSON(res.isError, res.content, res.structured), nil
		}
	}
}

// refusedUninitialized reports whether the SDK refuses req on ss, as it
// refuses every request of a session not initialized yet that is not a
// 2026-07-28 one (which carries its version in _meta): a take leaves
// such a request to the SDK, before anything is answered, admitted or
// audited.
func refusedUninitialized(ss *mcp.ServerSession, req *jsonrpc.Request) bool {
	return (ss == nil || ss.InitializeParams() == nil) && !carriesMetaVersion(req.Params)
}

// noTake leaves every request to the SDK.
func noTake(*jsonrpc.Request) sdkwire.TakenCall { return nil }

// publishCallable makes the take's table of served names (served
// name → registry name) what the server lists now. syncMu must be held.
func (g *Gateway) publishCallable() {
	m := make(map[string]string, len(g.advertised))
	background, serverTasks, headers := map[string]bool{}, map[string]bool{}, map[string]json.RawMessage{}
	for served, ad := range g.advertised {
		if ad.ok {
			m[served] = ad.public
		}
		if ad.ok && ad.background {
			background[served] = true
			serverTasks[served] = ad.serverTasks
		}
		if ad.ok && sdkwire.HeaderCandidate([]byte(ad.input)) {
			headers[served] = json.RawMessage(ad.input)
		}
	}
	g.callable.Store(&m)
	g.taskTools.Store(&background)
	g.serverTaskTools.Store(&serverTasks)
	g.headerSchemas.Store(&headers)
}

// stillRunning waits for the calls the take took on a session that
// ended (they were cancelled), and reports those that outlive deadline.
func (g *Gateway) stillRunning(taking *sdkwire.TakingTransport, deadline time.Time) error {
	if !waitUntil(deadline, taking.Wait) {
		return fmt.Errorf("gateway: tool calls still running when the shutdown timeout (%v) passed: a tool ignores cancellation", g.timeout)
	}
	return nil
}

// headerSchema is the input schema of the served tool name when it may
// annotate arguments with x-mcp-header (sdkwire.HeaderCandidate), nil
// for any other name.
func (g *Gateway) headerSchema(name string) json.RawMessage {
	return (*g.headerSchemas.Load())[name]
}

// headerSchemaFor is headerSchema as the caller of a request with header
// sees the tools: one its Screen hides has none, as one that does not
// exist (its Mcp-Param-* checks would tell the two apart). The Screen is
// asked only for a tool that has a schema.
func (g *Gateway) headerSchemaFor(ctx context.Context, header http.Header, name string) json.RawMessage {
	schema := g.headerSchema(name)
	if schema == nil {
		return nil
	}
	if _, ok := gateAs[Screen](g.gate); ok && !g.visibleTo(ctx, header, "")(OfferTool, (*g.callable.Load())[name]) {
		return nil
	}
	return schema
}
