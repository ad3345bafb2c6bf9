package host

import (
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

func TestMain(m *testing.M) {
	// The reconcile tests run real MCP servers by re-executing this binary.
	mcptest.RunIfChild()
	mcptest.VerifyTestMain(m)
}
