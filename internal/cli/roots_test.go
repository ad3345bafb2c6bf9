package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// server-filesystem works in the roots it is offered, a directory its args
// do not allow, and no longer warns that its client has none.
func TestServerFilesystemUsesRoots(t *testing.T) {
	bin := mcptest.ThirdPartyBin(t, "mcp-server-filesystem")
	argDir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rootDir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rootDir, filepath.Base(rootDir)+".txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filesystemConfig(t, bin, argDir, rootDir)
	list := func(dir string) run {
		args, _ := json.Marshal(map[string]string{"path": dir})
		return mcpbridge(t, "", "call", "-v", "--config", cfg, "mcp__filesystem__list_directory", string(args))
	}
	// The server applies its roots after the handshake, on its own time: a
	// call at once may still see its args' directory (README), so the root
	// is listed until one run has them applied.
	var last run
	mcptest.Eventually(t, 60*time.Second, func() bool {
		last = list(rootDir)
		return last.code == 0
	}, "the root never listed: %v", &last)
	if !strings.Contains(last.stdout, filepath.Base(rootDir)+".txt") || strings.Contains(last.stderr, "Client does not support MCP Roots") {
		t.Errorf("the root:\n%s%s", last.stdout, last.stderr)
	}
}
