package gateway

import (
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

func TestMain(m *testing.M) {
	// Stdio backends re-execute this binary as their MCP server.
	mcptest.RunIfChild()
	if os.Getenv(stdioChildEnv) == "1" {
		os.Exit(runStdioChild())
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if err := mcptest.VerifyNoChildren(10 * time.Second); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			code = 1
		}
		os.Exit(code)
	}))
}
