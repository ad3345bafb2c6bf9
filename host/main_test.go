package host

import (
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

func TestMain(m *testing.M) {
	// The reconcile tests run real MCP servers by re-executing this binary.
	mcptest.RunIfChild()
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if err := mcptest.VerifyNoChildren(10 * time.Second); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			code = 1
		}
		os.Exit(code)
	}))
}
