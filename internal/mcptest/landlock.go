package mcptest

import (
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
		Unavailable(t, "this kernel has no Landlock; sandbox tests need it")
	}
	return abi
}
