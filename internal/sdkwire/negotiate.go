package sdkwire

import (
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/serverwire"
)

// NegotiateInitialize sets p, the params of an initialize a server
// session is handed (in a receiving middleware, before the SDK's
// handler), to the protocol version the SDK's server answers it with:
// the version asked for when the server supports it and it is before
// 2026-07-28 (initialize is the older protocols' handshake), else the
// newest supported before 2026-07-28. The SDK keeps p as the session's
// InitializeParams with the version the client asked for (assumption
// 41), so a client asking 2026-07-28 would be answered 2025-11-25 yet
// have a session read as 2026-07-28: by [TakesCalls], and by the SDK,
// which then refuses to put it requests in the middle of its calls. For
// a server that narrows none of [mcp.SupportedProtocolVersions].
func NegotiateInitialize(p *mcp.InitializeParams) {
	if p == nil {
		return
	}
	supported := mcp.SupportedProtocolVersions() // newest first
	if slices.Contains(supported, p.ProtocolVersion) && p.ProtocolVersion < serverwire.PerRequestVersion {
		return
	}
	p.ProtocolVersion = "2025-11-25" // the SDK's answer when it supports none before
	for _, v := range supported {
		if v < serverwire.PerRequestVersion {
			p.ProtocolVersion = v
			return
		}
	}
}
