package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/retrieval"
)

func writeSpecs(t *testing.T, specs string) string {
	path := filepath.Join(t.TempDir(), "servers.json")
	if err := os.WriteFile(path, []byte(specs), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Two pinned npm servers of testdata/thirdparty, captured the way the
// retrieval catalog is.
func TestCapture(t *testing.T) {
	node := mcptest.ThirdPartyBin(t, "node")
	modules := filepath.Dir(filepath.Dir(node))
	specs := writeSpecs(t, `[
		{"name": "everything", "package": "@modelcontextprotocol/server-everything", "bin": "mcp-server-everything"},
		{"name": "memory", "package": "@modelcontextprotocol/server-memory", "bin": "mcp-server-memory",
		 "env": {"MEMORY_FILE_PATH": "{tmp}/memory.jsonl", "UNUSED": "{dummy}"}, "files": {"notes.txt": "a file the server may read"}}
	]`)
	out := filepath.Join(t.TempDir(), "catalog.json")
	if err := run(specs, modules, node, out, "the command", time.Minute); err != nil {
		t.Fatal(err)
	}
	cat, err := retrieval.LoadCatalog(out)
	if err != nil {
		t.Fatal(err)
	}
	if cat.Source.Command != "the command" || !strings.HasPrefix(cat.Source.Node, "v") || cat.Source.Captured == "" {
		t.Errorf("source %+v", cat.Source)
	}
	if len(cat.Servers) != 2 || cat.Servers[0].Name != "everything" || cat.Servers[1].Name != "memory" {
		t.Fatalf("servers %+v", cat.Servers)
	}
	if p := cat.Servers[0].Package; !strings.HasPrefix(p, "@modelcontextprotocol/server-everything@20") {
		t.Errorf("package %q, want name@version", p)
	}
	var names []string
	for _, tl := range cat.Servers[0].Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "echo") || !slices.IsSorted(names) {
		t.Errorf("everything's tools %v: want echo among them, sorted", names)
	}
	echo := cat.Servers[0].Tools[slices.Index(names, "echo")]
	if echo.Description == "" || !strings.Contains(string(echo.InputSchema), "message") {
		t.Errorf("echo as captured: %+v", echo)
	}
}

func TestCaptureErrors(t *testing.T) {
	node := mcptest.ThirdPartyBin(t, "node")
	modules := filepath.Dir(filepath.Dir(node))
	out := filepath.Join(t.TempDir(), "catalog.json")
	for _, tc := range []struct {
		name, specs, modules, want string
	}{
		{"no modules", `[]`, "", "-modules is required"},
		{"bad specs", `{`, modules, "servers.json"},
		{"unknown package", `[{"name":"x","package":"no-such-package","bin":"x"}]`, modules, "server x (no-such-package)"},
		{"unknown bin", `[{"name":"x","package":"@modelcontextprotocol/server-memory","bin":"no-such-bin"}]`, modules, "no-such-bin"},
		{"server fails", `[{"name":"x","package":"@modelcontextprotocol/server-filesystem","bin":"mcp-server-filesystem","args":["/no/such/dir"]}]`, modules, "server x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(writeSpecs(t, tc.specs), tc.modules, node, out, "c", 20*time.Second)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("run: %v, want an error with %q", err, tc.want)
			}
		})
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed capture wrote the catalog")
	}
}
