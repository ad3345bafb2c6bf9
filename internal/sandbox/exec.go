package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
)

// ExecArg is the first argument of the re-executed mcpbridge that confines
// itself and execs the server:
//
//	mcpbridge __sandbox-exec PLAN-JSON PATH ARGV0 ARGS...
const ExecArg = "__sandbox-exec"

// ExitSetup is the exit status of a re-executed process that could not
// confine itself or exec the server; the reason is on its stderr.
const ExitSetup = 126

// Command returns the argv of the re-execution of self that confines itself
// by p and then execs path with argv (argv[0] first).
func (p Plan) Command(self, path string, argv []string) ([]string, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encoding the sandbox plan: %w", err) // untested: a Plan always encodes
	}
	return append([]string{self, ExecArg, string(b), path}, argv...), nil
}

// The confining step keeps main on the process's first thread, from init
// on: the kernel keeps the parent-death signal mcpbridge starts servers
// with on that thread only (new threads start without one), and an exec
// from any other would start the server without it, to outlive a killed
// mcpbridge.
func init() {
	if isExec() {
		runtime.LockOSThread()
	}
}

func isExec() bool { return len(os.Args) >= 2 && os.Args[1] == ExecArg }

// RunIfExec turns the process into the confining step of a sandboxed
// start when its first argument is ExecArg: it never returns then, and
// exits with ExitSetup when it cannot confine itself or exec the server.
// Call it first in main (on the main goroutine, as init locked it to the
// first thread), and in the TestMain of packages whose tests start
// sandboxed children (they re-execute the test binary).
func RunIfExec() {
	if !isExec() {
		return
	}
	os.Exit(run(os.Args[2:], os.Stderr))
}

// run decodes the plan and hands over to the server; it returns only when
// that failed.
func run(args []string, stderr io.Writer) int {
	if len(args) < 3 {
		fmt.Fprintf(stderr, "mcpbridge %s: want PLAN PATH ARGV0 [ARGS...], got %d arguments\n", ExecArg, len(args))
		return ExitSetup
	}
	var p Plan
	if err := json.Unmarshal([]byte(args[0]), &p); err != nil {
		fmt.Fprintf(stderr, "mcpbridge %s: decoding the plan: %v\n", ExecArg, err)
		return ExitSetup
	}
	err := confineAndExec(p, args[1], args[2:])
	fmt.Fprintf(stderr, "mcpbridge sandbox: %v\n", err)
	return ExitSetup
}
