// Package gateway serves every tool of a tool.Registry as one MCP server, so
// any MCP client (an IDE, an agent, another harness) pointed at mcpbridge
// sees the namespaced tools of all configured servers.
//
// A Gateway is a go-sdk mcp.Server whose tool set mirrors the registry: same
// public names, descriptions, schema bytes and order (sorted by name,
// paginated; with Options.NewView each session lists its own view of it,
// see below). It watches the registry and applies each change as a diff, so
// a tool that stays is never removed and re-added, and the SDK debounces a
// burst of changes into one notifications/tools/list_changed per session.
//
// tools/call runs the registry's tool with the client's context (its
// cancellation reaches an MCP backend as notifications/cancelled) and
// forwards backend progress to the caller's progress token. Results keep the
// backend's original content blocks and structuredContent, byte for byte;
// the choices for the cases in between are documented on [Gateway].
//
// A client that leaves mid-call without notifications/cancelled has its
// calls cancelled too: over stdio when its session ends, over HTTP when
// the request stream waiting for the result ends — at once when it cannot
// be resumed (JSON responses, stateless mode, protocol 2026-07-28), after
// [Options.ResumeGrace] on a resumable SSE stream unless the client
// resumed a stream of its session by then.
//
// With Options.NewView each client session lists its own view of the
// catalog (deferred loading, package toolview): its search_tools calls
// load tools for it alone, with a list_changed to it alone; see [View].
//
// On stdio-like sessions (ServeStdio, ServeTransport) the gateway answers
// tools/call itself, beneath the SDK's server session
// (sdkwire.TakingTransport): the SDK's server would decode each request's
// params twice with a fresh 32 KiB decoder, pass it through two
// goroutines and marshal the result twice, most of a forwarded call's
// cost. Over Streamable HTTP the gateway's own transport (transport.go,
// docs/engine.md) gives each session such a connection, so its calls are
// taken the same way, and a stateless 2026-07-28 POST's call of a client
// that offers nothing too (perrequest.go); the transport frames, routes
// and resumes the streams as the SDK's handler does. Whichever way a
// tools/call arrives, it goes one call path (the session's slot,
// readiness, the Gate, the view, the run), with the same bytes on the
// wire; the takes accept only calls of a served tool with plain params,
// and leave everything else (the handshake, other methods,
// notifications, what they cannot answer byte for byte) to the SDK's
// session.
// docs/gateway-call.md follows one call through the gateway.
//
// With Options.Gate every tools/call is first put to the Gate (who is
// calling, may they, record it): the seam where identity, policy, audit
// and rate limits plug in; see [Gate].
//
// The same Gateway serves any number of sessions at once: [Gateway.ServeStdio]
// for one client on a pair of pipes, [Gateway.Handler] for Streamable HTTP at
// /mcp (plus /healthz), with the safety checks a local tool server needs:
// loopback-only [Listen] unless a bearer token is set, a constant-time token
// check, and Host/Origin checks against DNS rebinding.
package gateway
