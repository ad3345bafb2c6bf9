package tool

import "context"

type callerKey struct{}

// WithCaller returns a context whose calls are made for a client that
// describes itself with each request (MCP 2026-07-28's _meta: its
// clientInfo and clientCapabilities, by their wire keys), so that a source
// which forwards calls to a server of that protocol passes the caller's
// description on, filtered by what the source relays, and the server
// judges the caller rather than the forwarder.
func WithCaller(ctx context.Context, meta map[string]any) context.Context {
	return context.WithValue(ctx, callerKey{}, meta)
}

// CallerFrom returns the caller's description of ctx (WithCaller), or nil.
// It must not be modified.
func CallerFrom(ctx context.Context) map[string]any {
	m, _ := ctx.Value(callerKey{}).(map[string]any)
	return m
}
