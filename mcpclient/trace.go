package mcpclient

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Operations a Tracer is told of.
const (
	OpConnect = "connect" // a connection attempt: transport and handshake
	OpSync    = "sync"    // a tool sync: tools/list, every page, and the swap
	OpCall    = "call"    // a tool call, detail its raw name
)

// Tracer traces a server's operations (Options.Tracer), for OpenTelemetry
// or the like, without this package knowing it. Its methods must be safe
// for concurrent use.
type Tracer interface {
	// Start begins operation op (OpConnect, OpSync, OpCall) of server;
	// detail is a call's raw tool name. The operation runs in the returned
	// context (which carries its span), and end is called once with its
	// error.
	Start(ctx context.Context, op, server, detail string) (_ context.Context, end func(error))
	// Inject returns the _meta entries that carry ctx's trace context to
	// the server ("traceparent", "tracestate"), nil for none.
	Inject(ctx context.Context) map[string]any
}

// noEnd ends an untraced operation.
func noEnd(error) {}

// trace starts op with the server's Tracer, if it has one.
func (s *Server) trace(ctx context.Context, op, detail string) (context.Context, func(error)) {
	if s.opts.Tracer == nil {
		return ctx, noEnd
	}
	return s.opts.Tracer.Start(ctx, op, s.cfg.ServerName, detail)
}

// withTraceMeta returns meta (the _meta of a request sent in ctx) with the
// trace context added, when the server is traced.
func (s *Server) withTraceMeta(ctx context.Context, meta mcp.Meta) mcp.Meta {
	if s.opts.Tracer == nil {
		return meta
	}
	for k, v := range s.opts.Tracer.Inject(ctx) {
		if meta == nil {
			meta = mcp.Meta{}
		}
		meta[k] = v
	}
	return meta
}
