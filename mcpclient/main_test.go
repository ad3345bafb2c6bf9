package mcpclient

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

func TestMain(m *testing.M) {
	// Stdio tests re-execute this binary as their MCP server.
	mcptest.RunIfChild()
	goleak.VerifyTestMain(m)
}
