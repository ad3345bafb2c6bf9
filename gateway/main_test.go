package gateway

import (
	"os"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/skillpeer"
)

func TestMain(m *testing.M) {
	// Stdio backends re-execute this binary as their MCP server.
	skillpeer.RunIfChild()
	mcppeer.RunIfChild()
	if os.Getenv(stdioChildEnv) == "1" {
		os.Exit(runStdioChild())
	}
	if os.Getenv(searchChildEnv) == "1" {
		os.Exit(runSearchChild())
	}
	mcptest.VerifyTestMain(m)
}
