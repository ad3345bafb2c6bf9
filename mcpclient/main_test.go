package mcpclient

import (
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

func TestMain(m *testing.M) {
	// Stdio tests re-execute this binary as their MCP server.
	mcppeer.RunIfChild()
	mcptest.VerifyTestMain(m)
}
