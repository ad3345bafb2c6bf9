package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// runNodeScript runs testdata/script with the pinned node and the TypeScript
// SDK of testdata/thirdparty, args after it, and returns what it printed on
// stdout; a failure ends the test with its stderr. This test binary acts as
// mcpbridge for any child the script starts (serveStdioLine).
func runNodeScript(t *testing.T, script string, args ...string) (stdout []byte, stderr string) {
	t.Helper()
	node := mcptest.ThirdPartyBin(t, "node")
	path, err := filepath.Abs(filepath.Join("testdata", script))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{path}, args...)...)
	cmd.Env = append(os.Environ(), mainEnv+"=1", "NODE_MODULES="+filepath.Dir(filepath.Dir(node)))
	var errOut strings.Builder
	cmd.Stderr = &errOut
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client %s: %v\n%s", script, err, errOut.String())
	}
	return out, errOut.String()
}

// serveStdioLine is the command line of this test binary as `mcpbridge serve
// --stdio --config cfg`, for a node client to start.
func serveStdioLine(t *testing.T, cfg string) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, "serve", "--stdio", "--config", cfg}
}
