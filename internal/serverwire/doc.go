// Package serverwire is the MCP server side's wire format as the gateway
// writes it on its own paths (the connection-level take on stdio and
// Streamable HTTP, and its Streamable HTTP transport, docs/engine.md):
// tools/call params read without a decoder ([ReadCallParams],
// [ReadPerRequestCall]), tools/call results written as bytes
// ([CallResultJSON], [CallResultJSONPerRequest]), JSON-RPC responses and
// notifications ([ResponseJSON], [NotificationJSON]), and Streamable
// HTTP's headers, SSE events and statuses ([SetResponseHeaders],
// [AppendEvent], [EventID], [Primes], [ErrorStatus]), and the check of
// a call's Mcp-Param-* headers ([ParamHeadersProblem]).
//
// It relies on nothing beneath the go-sdk's API: what it writes is the
// protocol's. It writes it byte for byte as the SDK's own server and
// Streamable HTTP handler would, so a client cannot tell which path
// served it. That sameness is not an assumption the gateway rests on but
// a parity check: each is named P1 to P9 where it is written, and
// compared side by side with the SDK by the test package sdkwire's doc
// names for it. An SDK upgrade that fails one changes the reference, not
// the gateway's correctness; follow it or say why not.
package serverwire
