package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/childproc"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/sandbox"
)

// The real server-filesystem, run by the pinned node through its npm bin,
// starts sandboxed with nothing but its directory named, and serves it: its
// runtime (node_modules, node) is readable by default.
func TestNPMFilesystemServerSandboxed(t *testing.T) {
	mcptest.RequireLandlock(t)
	bin := mcptest.ThirdPartyBin(t, "mcp-server-filesystem")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello from the sandbox"), 0o600); err != nil {
		t.Fatal(err)
	}
	tr := &childproc.Transport{
		Command: bin,
		Args:    []string{dir},
		// The bin starts with #!/usr/bin/env node: the pinned node comes first.
		Env:     childproc.Env(os.Environ(), map[string]string{"PATH": filepath.Dir(bin) + ":/usr/bin:/bin"}),
		Sandbox: &sandbox.Spec{Write: []string{dir}},
		Stderr:  func(line string) { t.Logf("server-filesystem: %s", line) },
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("starting server-filesystem sandboxed: %v", err)
	}
	defer cs.Close()
	if tr.Process().Sandbox() == nil {
		t.Fatal("the server runs without its sandbox")
	}
	text := func(name string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError {
			t.Fatalf("%s failed: %v", name, res.Content[0].(*mcp.TextContent).Text)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	if got := text("read_text_file", map[string]any{"path": filepath.Join(dir, "hello.txt")}); !strings.Contains(got, "hello from the sandbox") {
		t.Errorf("read_text_file = %q", got)
	}
	text("write_file", map[string]any{"path": filepath.Join(dir, "new.txt"), "content": "written"})
	if b, err := os.ReadFile(filepath.Join(dir, "new.txt")); err != nil || string(b) != "written" {
		t.Errorf("the written file holds %q (%v)", b, err)
	}
}
