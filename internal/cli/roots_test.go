//lint:file-ignore SA1019 the test client offers roots, deprecated as of MCP 2026-07-28 but carried by the bridge.

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// server-filesystem works in the roots it is offered, a directory its args
// do not allow, and no longer warns that its client has none.
func TestServerFilesystemUsesRoots(t *testing.T) {
	t.Parallel()
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

// confinedFS is server-filesystem given one argument directory (dir, with
// inside.txt) and a secret outside it.
type confinedFS struct {
	bin, dir, inside, outside string
}

func newConfinedFS(t *testing.T) confinedFS {
	t.Helper()
	bin := mcptest.ThirdPartyBin(t, "mcp-server-filesystem")
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fs := confinedFS{bin: bin, dir: filepath.Join(base, "confined"), outside: filepath.Join(base, "secret.txt")}
	fs.inside = filepath.Join(fs.dir, "inside.txt")
	if err := os.Mkdir(fs.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for path, text := range map[string]string{fs.inside: "inside text", fs.outside: "outside secret"} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return fs
}

// readArgs is the arguments of read_text_file for path.
func readArgs(path string) string {
	b, _ := json.Marshal(map[string]string{"path": path})
	return string(b)
}

// widened is what server-filesystem logs when it takes the roots offered
// in place of its argument directories.
const widened = "Updated allowed directories from MCP roots"

// callFromRoot runs the real command as `mcpbridge call -v` from the
// directory /, as MCP clients often launch servers.
func callFromRoot(t *testing.T, cfg, name, args string) run {
	t.Helper()
	cmd := mcpbridgeCommand(t, "call", "-v", "--config", cfg, name, args)
	cmd.Dir = "/"
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running mcpbridge: %v", err)
	}
	return run{cmd.ProcessState.ExitCode(), out.String(), errOut.String()}
}

// assertConfinedCalls reads inside and outside fs's directory through
// `mcpbridge call` from / with cfg: only the inside read works, and the
// server settled its roots before each call (cfg runs it behind the roots
// gate) without taking other directories from them.
func assertConfinedCalls(t *testing.T, cfg string, fs confinedFS) {
	t.Helper()
	in := callFromRoot(t, cfg, "mcp__fs__read_text_file", readArgs(fs.inside))
	if in.code != 0 || !strings.Contains(in.stdout, "inside text") {
		t.Errorf("inside its directory: %+v", in)
	}
	out := callFromRoot(t, cfg, "mcp__fs__read_text_file", readArgs(fs.outside))
	if out.code != 1 || strings.Contains(out.stdout, "outside secret") || !strings.Contains(out.stdout, "Access denied") {
		t.Errorf("outside its directory: %+v", out)
	}
	for _, r := range []run{in, out} {
		if strings.Contains(r.stderr, widened) {
			t.Errorf("the server was offered roots:\n%s", r.stderr)
		}
		if !slices.ContainsFunc(rootsSettled, func(s string) bool { return strings.Contains(r.stderr, s) }) {
			t.Errorf("the server never settled its roots:\n%s", r.stderr)
		}
	}
}

// gated returns the command and arguments that run fs's server behind the
// roots gate (rootsGateEnv), and the environment that makes it one.
func gated(t *testing.T, fs confinedFS) (command string, args []string, env map[string]string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe, []string{fs.bin, fs.dir}, map[string]string{rootsGateEnv: "1"}
}

// An entry without roots, run from /, leaves server-filesystem in its
// argument directory (it used to be offered the working directory, /).
// Each call reaches the server only once it has settled its roots.
func TestRootsNeverWidenCall(t *testing.T) {
	fs := newConfinedFS(t)
	command, args, env := gated(t, fs)
	argsJSON, _ := json.Marshal(args)
	envJSON, _ := json.Marshal(env)
	cfg := writeConfig(t, fmt.Sprintf(`- id: fs
  name: mcp-client
  config:
    serverName: fs
    transport: stdio
    command: %s
    args: %s
    env: %s
`, command, argsJSON, envJSON))
	assertConfinedCalls(t, cfg, fs)
}

// An unmodified Claude Desktop config (mcpServers JSON) keeps its meaning:
// the server works in its argument directory only. The gate in front of
// the server changes no message.
func TestRootsNeverWidenImported(t *testing.T) {
	fs := newConfinedFS(t)
	command, args, env := gated(t, fs)
	desktop, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"fs": map[string]any{"command": command, "args": args, "env": env},
	}})
	cfg := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	if err := os.WriteFile(cfg, desktop, 0o644); err != nil {
		t.Fatal(err)
	}
	assertConfinedCalls(t, cfg, fs)
}

// `mcpbridge serve --stdio` launched from / by a client that itself offers
// the root / does not pass that root, or its own working directory, to a
// server whose entry has no roots.
func TestRootsNeverWidenServe(t *testing.T) {
	fs := newConfinedFS(t)
	cfg := writeConfig(t, fmt.Sprintf(`- id: fs
  name: mcp-client
  config:
    serverName: fs
    transport: stdio
    command: %s
    args: [%q]
    protocolVersion: "2025-11-25"
`, fs.bin, fs.dir))
	client := mcp.NewClient(&mcp.Implementation{Name: "wide-client", Version: "1"}, nil)
	client.AddRoots(&mcp.Root{URI: "file:///", Name: "everything"})
	cmd := mcpbridgeCommand(t, "serve", "--stdio", "--config", cfg)
	cmd.Dir = "/"
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	waitTools(t, cs, "mcp__fs__read_text_file")
	// The server settles its roots once, after its handshake: it says so
	// either way.
	mcptest.Eventually(t, 30*time.Second, func() bool {
		s := stderr.String()
		return strings.Contains(s, widened) || strings.Contains(s, "No valid root directories provided by client")
	}, "server-filesystem never settled its roots")
	if text, isErr := callText(t, cs, "mcp__fs__read_text_file", readArgs(fs.inside)); isErr || !strings.Contains(text, "inside text") {
		t.Errorf("inside its directory: %q %v", text, isErr)
	}
	if text, isErr := callText(t, cs, "mcp__fs__read_text_file", readArgs(fs.outside)); !isErr || strings.Contains(text, "outside secret") {
		t.Errorf("outside its directory: %q %v", text, isErr)
	}
	if text, _ := callText(t, cs, "mcp__fs__list_allowed_directories", `{}`); !strings.Contains(text, fs.dir) || strings.Contains(text, "\n/\n") {
		t.Errorf("allowed directories: %q", text)
	}
	if strings.Contains(stderr.String(), widened) {
		t.Errorf("the server was offered roots:\n%s", stderr.String())
	}
}
