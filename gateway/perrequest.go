//lint:file-ignore SA1019 MCP 2026-07-28 deprecates logging, sampling and roots (SEP-2577) but keeps them working for at least a year; the bridge carries them.
package gateway

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/internal/serverwire"
)

// 2026-07-28 calls beneath a stateless POST's session (docs/engine.md).
// The SDK's session of such a POST learns its client only from the
// request's _meta, in its own dispatch (the session's initialize params
// it sets there are out of reach of a take, which runs before it); a
// taken call gets the same facts from the request itself: the client's
// name, the log level, and the protocol version under which the SDK's
// session refuses to ask its client anything.

// takeStateless returns the take of a stateless POST's session: take's
// for a session below 2026-07-28, and, for a 2026-07-28 POST, its first
// round of a call (takePerRequest).
func (g *Gateway) takeStateless(session *atomic.Pointer[mcp.ServerSession]) func(*jsonrpc.Request) sdkwire.TakenCall {
	legacy := g.takeSkills(session, g.take(session))
	return func(req *jsonrpc.Request) sdkwire.TakenCall {
		if call := g.statelessTaskBody(req); call != nil {
			return call
		}
		if call := legacy(req); call != nil {
			return call
		}
		return g.takePerRequest(session.Load(), req)
	}
}

// takePerRequest returns the body that answers req, a 2026-07-28
// tools/call on ss, the session of its stateless POST, or nil to leave it
// to the SDK: a session the POST initialized (take's), params the lean
// reader leaves (a retry with answers, a task, a client of the tasks
// extension: serverwire's ReadPerRequestCall), a version other than
// 2026-07-28, a name the gateway does not serve. Its Mcp-Param-* headers
// were checked before (mcpHeadersOK). A client offering roots, sampling
// or elicitation has its call run parkable, as on the SDK's path
// (callRequest.asksByResult). The result, or the questions of a call
// that parked, is stamped as the SDK stamps a 2026-07-28 result.
func (g *Gateway) takePerRequest(ss *mcp.ServerSession, req *jsonrpc.Request) sdkwire.TakenCall {
	if req.Method != "tools/call" || ss == nil || ss.InitializeParams() != nil {
		return nil
	}
	extra, _ := req.Extra.(*mcp.RequestExtra)
	if extra == nil || extra.Header.Get("Mcp-Protocol-Version") != serverwire.PerRequestVersion {
		return nil
	}
	p, client, ok := serverwire.ReadPerRequestCall(req.Params)
	if !ok || client.Version != serverwire.PerRequestVersion {
		return nil
	}
	if _, ok := (*g.callable.Load())[p.Name]; !ok {
		return nil
	}
	call := callRequest{session: ss, header: extra.Header, oneRequest: true, client: client.Client,
		params: &mcp.CallToolParamsRaw{Meta: p.Meta, Name: p.Name, Arguments: p.Arguments},
		peer:   &perRequestPeer{ss: ss, version: client.Version, level: client.LogLevel, caps: client.Capabilities}}
	return func(ctx context.Context) (json.RawMessage, error) {
		call.cancel, _ = sdkwire.CallCancel(ctx)
		res, err := g.serveCall(ctx, call)
		if err != nil {
			return nil, err
		}
		if res.questions != nil {
			return sdkwire.InputRequiredJSONPerRequest(res.questions, res.state, g.serverInfo)
		}
		return serverwire.CallResultJSONPerRequest(res.isError, res.content, res.structured, g.serverInfo), nil
	}
}

// perRequestPeer is the client of a taken 2026-07-28 call, as the SDK's
// session of its POST serves it: progress through the session (to the
// POST's stream), log messages from the level the request names (none
// without one; the session itself passes every level, statelessState),
// and what its client offers, for the questions of its backend: asked
// through input-required results when the call parks (runParkable), else
// refused with the SDK's words (Gateway.ask: server-initiated requests
// are forbidden from 2026-07-28, serverwire.PerRequestAskError).
type perRequestPeer struct {
	ss      *mcp.ServerSession
	version string                  // the request's protocol version
	level   string                  // the request's log level, "" for none
	caps    *mcp.ClientCapabilities // what the request's client offers
}

var _ notifier = (*perRequestPeer)(nil)

func (p *perRequestPeer) NotifyProgress(ctx context.Context, params *mcp.ProgressNotificationParams) error {
	return p.ss.NotifyProgress(ctx, params)
}

func (p *perRequestPeer) Log(ctx context.Context, params *mcp.LoggingMessageParams) error {
	if !serverwire.LogPasses(string(params.Level), p.level) {
		return nil
	}
	return p.ss.Log(ctx, params)
}
