package mcppeer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sandbox"
)

// Environment variables of a child process that serves a peer. The bridge
// scrubs the parent environment of its children, so they reach the child
// only through a config's env overlay (mcptest.ChildCommand returns one).
// Neither name is one the scrub drops.
const (
	// ChildEnv names the kind of server the process should be ("fixture"
	// or "raw"); unset or empty means a normal run.
	ChildEnv = "MCPTEST_CHILD"
	// RawScriptEnv names the JSON file with the [RawScript] for kind "raw".
	RawScriptEnv = "MCPTEST_RAW_SCRIPT"
	// NotifyTraceEnv, when not empty, makes a "fixture" child print
	// "received <method>" for every notification and tools/call it reads: to stderr when
	// it is "1", else appended to the file it names (which outlives a
	// parent that stops reading the child's stderr when it exits).
	NotifyTraceEnv = "MCPTEST_NOTIFY_TRACE"
	// CrashDirEnv, when set, names a directory where a child also writes
	// its crash output (debug.SetCrashOutput) to <pid>.txt: the goroutine
	// dump of a SIGQUIT, which the Go runtime prints by default (no child
	// traps it), or of a fatal panic.
	CrashDirEnv = "MCPTEST_CRASH_DIR"
)

// CrashExitStatus is the exit status of a "fixture" child after its crash
// tool has replied (docs/upstream.md §8.4 test 111).
const CrashExitStatus = 7

// ChildKinds returns the values ChildEnv may take.
func ChildKinds() []string { return []string{"fixture", "raw", "asker", "flooder"} }

// RunIfChild turns the process into an MCP server when ChildEnv is set, so
// that a test binary (or the bench driver) can re-execute itself as a stdio
// server child; call it first in TestMain (or main), before goleak:
//
//	func TestMain(m *testing.M) {
//		mcppeer.RunIfChild()
//		goleak.VerifyTestMain(m)
//	}
//
// Kind "asker" serves [Asker] on stdio, "flooder" [Flooder]. Kind "fixture" serves [Fixture] on stdio, exits with CrashExitStatus
// after its crash tool replies and prints "cancelled" to stderr when a slow
// call is cancelled. Kind "raw" serves [RawServer] with the script in the
// file named by RawScriptEnv. Either exits 0 when stdin closes; a bad kind
// or script exits 2 and a failed session 1, with the reason on stderr.
// Without ChildEnv, RunIfChild returns at once.
//
// It first lets a sandboxed start of such a child confine itself
// ([sandbox.RunIfExec]): the bridge re-executes the binary for that, with
// the child's environment.
func RunIfChild() {
	sandbox.RunIfExec()
	kind := os.Getenv(ChildEnv)
	if kind == "" {
		return
	}
	if dir := os.Getenv(CrashDirEnv); dir != "" {
		crashOutput(dir)
	}
	// The child's own process ends here; this line only runs in children,
	// whose coverage the parent's GOCOVERDIR collects.
	os.Exit(runChild(context.Background(), kind, os.Getenv, os.Stdin, os.Stdout, os.Stderr, os.Exit))
}

// crashOutput copies the process's crash output to dir/<pid>.txt.
func crashOutput(dir string) {
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%d.txt", os.Getpid())))
	if err != nil {
		return
	}
	debug.SetCrashOutput(f, debug.CrashOptions{})
	f.Close() // SetCrashOutput keeps its own duplicate
}

// runChild is RunIfChild with its process pieces passed in, so tests can
// run a child in-process. It returns the exit status.
func runChild(ctx context.Context, kind string, getenv func(string) string, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer, exit func(int)) int {
	switch kind {
	case "fixture":
		trace, closeTrace, err := traceTo(getenv(NotifyTraceEnv), stderr)
		if err != nil {
			fmt.Fprintf(stderr, "mcptest fixture child: %v\n", err)
			return 2
		}
		defer closeTrace()
		return runFixtureChild(ctx, trace, stdin, stdout, stderr, exit)
	case "raw":
		return runRawChild(ctx, getenv, stdin, stdout, stderr)
	case "asker":
		return serveStdio(ctx, Asker(), stdin, stdout, stderr)
	case "flooder":
		return serveStdio(ctx, Flooder(), stdin, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "mcptest: %s=%q is not a child kind (want one of %v)\n", ChildEnv, kind, ChildKinds())
		return 2
	}
}

// traceTo returns where a fixture child traces notifications (see
// NotifyTraceEnv): nil for no trace.
func traceTo(setting string, stderr io.Writer) (io.Writer, func(), error) {
	switch setting {
	case "":
		return nil, func() {}, nil
	case "1":
		return stderr, func() {}, nil
	}
	f, err := os.OpenFile(setting, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", NotifyTraceEnv, err)
	}
	return f, func() { f.Close() }, nil
}

// runFixtureChild is the "fixture" child; trace, when not nil, gets a
// line for every notification it reads.
func runFixtureChild(ctx context.Context, trace io.Writer, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer, exit func(int)) int {
	srv := Fixture(FixtureOptions{
		OnCrash:  func() { exit(CrashExitStatus) },
		OnCancel: func() { fmt.Fprintln(stderr, "cancelled") },
	})
	if trace != nil {
		srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if strings.HasPrefix(method, "notifications/") || method == "tools/call" {
					fmt.Fprintln(trace, "received", method)
				}
				return next(ctx, method, req)
			}
		})
	}
	return serveStdio(ctx, srv, stdin, stdout, stderr)
}

// serveStdio serves srv on the child's stdio until stdin closes.
func serveStdio(ctx context.Context, srv *mcp.Server, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer) int {
	if err := srv.Run(ctx, &mcp.IOTransport{Reader: stdin, Writer: stdout}); err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "mcptest child: serving on stdio: %v\n", err)
		return 1
	}
	return 0
}

// runRawChild is the "raw" child.
func runRawChild(ctx context.Context, getenv func(string) string, stdin io.Reader, stdout io.Writer, stderr io.Writer) int {
	path := getenv(RawScriptEnv)
	if path == "" {
		fmt.Fprintf(stderr, "mcptest raw child: %s must name a JSON RawScript file (see mcptest.WriteRawScript)\n", RawScriptEnv)
		return 2
	}
	script, err := ReadRawScript(path)
	if err != nil {
		fmt.Fprintf(stderr, "mcptest raw child: %v\n", err)
		return 2
	}
	if err := ServeRaw(ctx, stdin, stdout, script); err != nil {
		fmt.Fprintf(stderr, "mcptest raw child: %v\n", err)
		return 1
	}
	return 0
}

// ReadRawScript reads the RawScript file at path as the "raw" child does:
// strictly, since an unknown field is a typo in a test, not something to
// ignore.
func ReadRawScript(path string) (RawScript, error) {
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
