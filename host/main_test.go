package host

import (
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

func TestMain(m *testing.M) {
	// The reconcile tests run real MCP servers by re-executing this binary.
	mcppeer.RunIfChild()
	mcptest.VerifyTestMain(m)
}
