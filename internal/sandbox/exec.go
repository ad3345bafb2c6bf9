package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
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

// RunIfExec turns the process into the confining step of a sandboxed
// start when its first argument is ExecArg: it never returns then, and
// exits with ExitSetup when it cannot confine itself or exec the server.
// Call it first in main, and in the TestMain of packages whose tests start
// sandboxed children (they re-execute the test binary).
func RunIfExec() {
	if len(os.Args) < 2 || os.Args[1] != ExecArg {
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
