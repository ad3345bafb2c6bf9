package serverwire

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// OneRequestSession reports whether session lives for its request of
// method only (parity check P5): over stateful Streamable HTTP, a POST
// without Mcp-Session-Id that does not initialize (a 2026-07-28 client's
// server/discover probe, a ping) gets a session of its own, with an id
// and no initialize params, which the handler closes when that request
// ends. Sessions of other transports have no id.
func OneRequestSession(session *mcp.ServerSession, method string) bool {
	return session != nil && session.ID() != "" && method != "initialize" && session.InitializeParams() == nil
}

// OneRequestLogLevel is the log level of the session the Streamable HTTP
// handler makes for a stateless POST below 2026-07-28 (parity check P6):
// the client sets none, and the session sends log messages from this
// level up ([LogPasses]).
const OneRequestLogLevel = "info"
