package mcpclient

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A JSON-RPC error reads "MCP error CODE: message", once, even when the
// server (a TypeScript one) put the prefix in its message already.
func TestDescribeCallErrorPrefixOnce(t *testing.T) {
	for _, c := range []struct{ msg, want string }{
		{"Invalid arguments", "MCP error -32602: Invalid arguments"},
		{"MCP error -32602: Invalid arguments", "MCP error -32602: Invalid arguments"},
		{"MCP error -32000: other code", "MCP error -32602: MCP error -32000: other code"},
	} {
		err := describeCallError(&jsonrpc.Error{Code: -32602, Message: c.msg})
		if err.Error() != c.want {
			t.Errorf("%q: got %q, want %q", c.msg, err, c.want)
		}
	}
}
