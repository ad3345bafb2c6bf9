package mcptest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestThirdPartyEverything runs the npm reference server for real: a
// wrong path or a broken install fails here first.
func TestThirdPartyEverything(t *testing.T) {
	bin := ThirdPartyBin(t, "mcp-server-everything")
	if !filepath.IsAbs(bin) || !strings.HasSuffix(bin, filepath.Join("testdata", "thirdparty", "node_modules", ".bin", "mcp-server-everything")) {
		t.Errorf("ThirdPartyBin = %q, want an absolute path into testdata/thirdparty", bin)
	}
	cmd := exec.Command(bin, "stdio")
	// No roots capability: server-everything then exits promptly when its
	// stdin closes (docs/sdk.md §11.2, "shutdown trap").
	client := newClient(&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("starting %s stdio: %v", bin, err)
	}
	defer cs.Close()
	CheckCall(t, cs, FixtureCall{Tool: "echo", Args: map[string]any{"message": "hello"}, Want: Blocks(TextBlock("Echo: hello"))})
}

func TestThirdPartyBinMissing(t *testing.T) {
	t.Run("skips outside CI", func(t *testing.T) {
		t.Setenv("CI", "")
		f := runFake(t, func(tb testing.TB) { ThirdPartyBin(tb, "no-such-server") })
		if f.fatal != "" || !strings.Contains(f.skip, `"no-such-server" is not installed`) || !strings.Contains(f.skip, "scripts/install-thirdparty.sh") {
			t.Errorf("skip %q fatal %q, want a skip telling to run the install script", f.skip, f.fatal)
		}
	})
	t.Run("CI=false counts as unset", func(t *testing.T) {
		t.Setenv("CI", "false")
		if f := runFake(t, func(tb testing.TB) { ThirdPartyBin(tb, "no-such-server") }); f.skip == "" || f.fatal != "" {
			t.Errorf("skip %q fatal %q, want a skip", f.skip, f.fatal)
		}
	})
	t.Run("fails in CI", func(t *testing.T) {
		t.Setenv("CI", "true")
		f := runFake(t, func(tb testing.TB) { ThirdPartyBin(tb, "no-such-server") })
		if f.skip != "" || !strings.Contains(f.fatal, "fatal because CI=true") || !strings.Contains(f.fatal, "scripts/install-thirdparty.sh") {
			t.Errorf("skip %q fatal %q, want a fatal naming CI and the install script", f.skip, f.fatal)
		}
	})
}

func TestThirdPartyBinOutsideModule(t *testing.T) {
	t.Chdir(t.TempDir())
	f := runFake(t, func(tb testing.TB) { ThirdPartyBin(tb, "mcp-server-everything") })
	if !strings.Contains(f.fatal, "no go.mod found") {
		t.Errorf("fatal = %q, want a missing go.mod error", f.fatal)
	}
}

func TestModuleRoot(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := moduleRoot(wd)
	if err != nil {
		t.Fatalf("moduleRoot(%s): %v", wd, err)
	}
	if root != filepath.Dir(filepath.Dir(wd)) {
		t.Errorf("moduleRoot(%s) = %s, want two levels up (internal/mcptest)", wd, root)
	}
}

func TestListedScenarios(t *testing.T) {
	out := []byte("Required for 2026-07-28 (3 scenarios):\n\nServer scenarios (test against a server):\n  - ping\n  - tools-list\n\nClient scenarios (test against a client):\n  - initialize\n\nRun and reported, but never scored:\n  extension (1):\n    - tasks-lifecycle [server]\n")
	if got := ListedScenarios(out, "Server scenarios"); !slices.Equal(got, []string{"ping", "tools-list"}) {
		t.Errorf("server scenarios: %q", got)
	}
	if got := ListedScenarios(out, "Client scenarios"); !slices.Equal(got, []string{"initialize"}) {
		t.Errorf("client scenarios: %q", got)
	}
}
