package mcptest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Environment variables of a child test binary. The bridge scrubs the
// parent environment of its children, so they reach the child only through
// a config's env overlay, which [ChildCommand] returns. Neither name is one
// the scrub drops.
const (
	// ChildEnv names the kind of server the test binary should be
	// ("fixture" or "raw"); unset or empty means a normal test run.
	ChildEnv = "MCPTEST_CHILD"
	// RawScriptEnv names the JSON file with the [RawScript] for kind "raw".
	RawScriptEnv = "MCPTEST_RAW_SCRIPT"
)

// CrashExitStatus is the exit status of a "fixture" child after its crash
// tool has replied (UPSTREAM §8.4 test 111).
const CrashExitStatus = 7

// childKinds are the values ChildEnv may take.
func childKinds() []string { return []string{"fixture", "raw"} }

// RunIfChild turns the test binary into an MCP server when ChildEnv is set;
// call it first in TestMain, before goleak:
//
//	func TestMain(m *testing.M) {
//		mcptest.RunIfChild()
//		goleak.VerifyTestMain(m)
//	}
//
// Kind "fixture" serves [Fixture] on stdio, exits with CrashExitStatus
// after its crash tool replies and prints "cancelled" to stderr when a slow
// call is cancelled. Kind "raw" serves [RawServer] with the script in the
// file named by RawScriptEnv. Either exits 0 when stdin closes; a bad kind
// or script exits 2 and a failed session 1, with the reason on stderr.
// Without ChildEnv, RunIfChild returns at once.
func RunIfChild() {
	kind := os.Getenv(ChildEnv)
	if kind == "" {
		return
	}
	// The child's own process ends here; this line only runs in children,
	// whose coverage the parent's GOCOVERDIR collects.
	os.Exit(runChild(context.Background(), kind, os.Getenv, os.Stdin, os.Stdout, os.Stderr, os.Exit))
}

// runChild is RunIfChild with its process pieces passed in, so tests can
// run a child in-process. It returns the exit status.
func runChild(ctx context.Context, kind string, getenv func(string) string, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer, exit func(int)) int {
	switch kind {
	case "fixture":
		srv := Fixture(FixtureOptions{
			OnCrash:  func() { exit(CrashExitStatus) },
			OnCancel: func() { fmt.Fprintln(stderr, "cancelled") },
		})
		if err := srv.Run(ctx, &mcp.IOTransport{Reader: stdin, Writer: stdout}); err != nil && ctx.Err() == nil {
			fmt.Fprintf(stderr, "mcptest fixture child: serving on stdio: %v\n", err)
			return 1
		}
		return 0
	case "raw":
		path := getenv(RawScriptEnv)
		if path == "" {
			fmt.Fprintf(stderr, "mcptest raw child: %s must name a JSON RawScript file (see mcptest.WriteRawScript)\n", RawScriptEnv)
			return 2
		}
		script, err := readRawScript(path)
		if err != nil {
			fmt.Fprintf(stderr, "mcptest raw child: %v\n", err)
			return 2
		}
		if err := ServeRaw(ctx, stdin, stdout, script); err != nil {
			fmt.Fprintf(stderr, "mcptest raw child: %v\n", err)
			return 1
		}
		return 0
	default:
		fmt.Fprintf(stderr, "mcptest: %s=%q is not a child kind (want one of %v)\n", ChildEnv, kind, childKinds())
		return 2
	}
}

// readRawScript reads a RawScript strictly: an unknown field is a typo in a
// test, not something to ignore.
func readRawScript(path string) (RawScript, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return RawScript{}, fmt.Errorf("reading the raw script: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var script RawScript
	if err := dec.Decode(&script); err != nil {
		return RawScript{}, fmt.Errorf("decoding the raw script %s: %w", path, err)
	}
	return script, nil
}

// ChildCommand returns what a config needs to spawn this test binary as a
// stdio MCP server of the given kind ("fixture" or "raw"): the binary's
// path, args that run no tests, and the env overlay with ChildEnv=kind plus
// extraEnv ("KEY=VALUE" entries, e.g. RawScriptEnv+"="+path). The test's
// TestMain must call [RunIfChild]. A bad kind or entry fails the test.
func ChildCommand(t testing.TB, kind string, extraEnv ...string) (command string, args []string, env map[string]string) {
	t.Helper()
	if !slices.Contains(childKinds(), kind) {
		t.Fatalf("mcptest.ChildCommand: kind %q is not a child kind (want one of %v)", kind, childKinds())
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("mcptest.ChildCommand: finding the test binary: %v", err) // untested: needs a broken /proc
	}
	env = map[string]string{ChildEnv: kind}
	for _, kv := range extraEnv {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			t.Fatalf("mcptest.ChildCommand: extraEnv entry %q is not KEY=VALUE", kv)
		}
		env[k] = v
	}
	return exe, []string{"-test.run=^$"}, env
}

// WriteRawScript writes script as JSON to a file in a new t.TempDir() and
// returns its path, for RawScriptEnv of a "raw" child.
func WriteRawScript(t testing.TB, script RawScript) string {
	t.Helper()
	b, err := json.Marshal(script)
	if err != nil {
		t.Fatalf("mcptest.WriteRawScript: encoding the script: %v", err)
	}
	path := filepath.Join(t.TempDir(), "raw-script.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatalf("mcptest.WriteRawScript: %v", err) // untested: t.TempDir is always writable
	}
	return path
}
