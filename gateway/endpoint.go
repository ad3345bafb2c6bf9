package gateway

import (
	"context"
	"net/http"

	"github.com/mcpbridge/mcpbridge/internal/serverwire"
)

// statelessKey marks the context of an HTTP request served without a
// session (routeRequest: true), or of a session served on a transport of
// its own, stdio or in memory (serveTransport: false), which is one
// client's for as long as it lasts, Options.Stateless or not.
type statelessKey struct{}

// servesStateless reports whether the MCP request with headers h and
// body (nil unless a POST's) is served without a session: every request
// with Options.Stateless, and on the default endpoint a 2026-07-28
// request (SEP-2575: a POST naming no session and that protocol version,
// in its Mcp-Protocol-Version header or, without one, its _meta), so one
// URL serves a 2025-11-25 client its session and a 2026-07-28 client
// per request. It is the one place the choice is made (routeRequest).
func (g *Gateway) servesStateless(method string, h http.Header, body []byte) bool {
	if g.opts.Stateless {
		return true
	}
	if method != http.MethodPost || h.Get("Mcp-Session-Id") != "" {
		return false
	}
	version := h.Get("Mcp-Protocol-Version")
	if version == "" {
		version = serverwire.PeekMetaVersion(body)
	}
	return version >= serverwire.PerRequestVersion
}

// routeRequest decides once, at the edge (after screen has read a POST's
// body), how the MCP request r is served (servesStateless), and marks its
// context for the paths after.
// The SDK connects a session with the context of the request that made
// it, so a session's handlers see the mark of that request.
func (g *Gateway) routeRequest(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.servesStateless(r.Method, r.Header, bodyOf(r)) {
			r = r.WithContext(context.WithValue(r.Context(), statelessKey{}, true))
		}
		next.ServeHTTP(w, r)
	})
}

// statelessIn reports whether ctx is of a request served without a
// session: those routeRequest marked, and with Options.Stateless every
// one but a stdio or in-memory session's (serveTransport), whose calls,
// and what they leave (a call parked for its client's answers), are
// bound to it: parked under no session, a call was any such session's
// to answer, and outlived its own.
func (g *Gateway) statelessIn(ctx context.Context) bool {
	v, marked := ctx.Value(statelessKey{}).(bool)
	return v || !marked && g.opts.Stateless
}

// stateless is statelessIn for an HTTP request.
func (g *Gateway) stateless(r *http.Request) bool { return g.statelessIn(r.Context()) }
