package mcptest

import (
	"os"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/sandbox"
)

// RequireLandlock returns the kernel's Landlock ABI for a test that runs
// sandboxed servers. Without Landlock the test fails when the CI
// environment variable is set (CI must run it) and is skipped otherwise.
func RequireLandlock(t testing.TB) int {
	t.Helper()
	abi := sandbox.ABI()
	if abi == 0 {
		if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
			t.Fatalf("this kernel has no Landlock; sandbox tests need it (fatal because CI=%s)", ci)
		}
		t.Skip("this kernel has no Landlock")
	}
	return abi
}
