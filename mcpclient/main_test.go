package mcpclient

import (
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

func TestMain(m *testing.M) {
	// Stdio tests re-execute this binary as their MCP server.
	mcptest.RunIfChild()
	mcptest.VerifyTestMain(m)
}
