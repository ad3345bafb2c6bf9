package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
)

// The driver's servers are this binary re-executed, except the minimal
// responder (bench/responder, built at start). mcppeer's kinds
// (MCPTEST_CHILD=fixture|raw) give the go-sdk fixture and the scripted raw
// server of the catalog row; BENCH_CHILD adds the memory probe.
const (
	// childEnv selects a benchmark-only child kind: "memprobe", a process
	// that connects servers and reports its own memory.
	childEnv = "BENCH_CHILD"
	// memModeEnv is what a memprobe connects: "raw" (go-sdk sessions) or
	// "bridge" (mcpclient servers); memServersEnv is how many.
	memModeEnv    = "BENCH_MEM_MODE"
	memServersEnv = "BENCH_MEM_SERVERS"
)

// runIfChild turns the process into a child server or probe when the
// environment says so, and exits; otherwise it returns at once. It must run
// first in main (and in TestMain), before anything else starts.
func runIfChild() {
	mcppeer.RunIfChild()
	kind := os.Getenv(childEnv)
	if kind == "" {
		return
	}
	os.Exit(runChild(context.Background(), kind, os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

// runChild is runIfChild with the process pieces passed in, so tests can
// run a child in-process. It returns the exit status.
func runChild(ctx context.Context, kind string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	switch kind {
	case "memprobe":
		n, err := envInt(getenv, memServersEnv, 1)
		if err == nil {
			var exe string
			if exe, err = os.Executable(); err == nil {
				err = memProbe(ctx, fixtureChild(exe), getenv(memModeEnv), n, stdout)
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "bench memprobe: %v\n", err)
			return 1
		}
		return 0
	default:
		fmt.Fprintf(stderr, "bench: %s=%q is not a child kind (want memprobe)\n", childEnv, kind)
		return 2
	}
}

// envInt reads a non-negative integer from the environment, def when unset.
func envInt(getenv func(string) string, name string, def int) (int, error) {
	s := getenv(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q is not a non-negative integer", name, s)
	}
	return n, nil
}

// childSpec is how to start one server child: a program (usually this
// binary) with args and an env overlay.
type childSpec struct {
	exe  string
	args []string
	env  map[string]string
}

// fixtureChild is the go-sdk fixture server (tools include echo).
func fixtureChild(exe string) childSpec {
	return childSpec{exe: exe, env: map[string]string{mcppeer.ChildEnv: "fixture"}}
}

// rawChild is the raw responder answering from the script file at path.
func rawChild(exe, path string) childSpec {
	return childSpec{exe: exe, env: map[string]string{mcppeer.ChildEnv: "raw", mcppeer.RawScriptEnv: path}}
}

// responderChild is the minimal responder at path (see buildResponder),
// listing tools tools (echo first), whose initialize takes delay.
func responderChild(path string, delay time.Duration, tools int) childSpec {
	return childSpec{exe: path, args: []string{"-delay=" + delay.String(), "-tools=" + strconv.Itoa(tools)}}
}

// buildResponder builds bench/responder, the minimal server, into dir and
// returns the program's path.
func buildResponder(root, dir string) (string, error) {
	return buildProgram(root, dir, "./bench/responder")
}

// buildProgram builds the main package pkg of the module at root into dir
// with the go command and returns the program's path.
func buildProgram(root, dir, pkg string) (string, error) {
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s (the go command must be on PATH): %w: %s", pkg, err, bytes.TrimSpace(b))
	}
	return out, nil
}

// environ is the child's complete environment: ours without any child
// selector (a child must never turn into another kind by inheritance), plus
// the overlay.
func (c childSpec) environ() []string {
	env := cleanEnviron()
	for k, v := range c.env {
		env = append(env, k+"="+v)
	}
	return env
}

// command returns an unstarted command for the child.
func (c childSpec) command() *exec.Cmd {
	cmd := exec.Command(c.exe, c.args...)
	cmd.Env = c.environ()
	return cmd
}

// startPiped starts cmd with pipes to its stdin and from its stdout. The
// error names what, the command or the pipes, failed.
func startPiped(cmd *exec.Cmd, what string) (io.WriteCloser, io.ReadCloser, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: stdin pipe: %w", what, err) // untested: only when out of file descriptors
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		stdin.Close()
		return nil, nil, fmt.Errorf("%s: stdout pipe: %w", what, err) // untested: only when out of file descriptors
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("%s: starting %s: %w", what, cmd.Path, err)
	}
	return stdin, stdout, nil
}

// cleanEnviron is os.Environ without the variables that select a child kind.
func cleanEnviron() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "BENCH_") || strings.HasPrefix(k, "MCPTEST_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// writeScript writes a raw responder script into dir and returns its path.
func writeScript(dir, name string, script mcppeer.RawScript) (string, error) {
	b, err := json.Marshal(script)
	if err != nil {
		return "", fmt.Errorf("encoding the raw script %s: %w", name, err) // untested: RawMessages built valid here
	}
	path := filepath.Join(dir, name+".json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return "", fmt.Errorf("writing the raw script: %w", err)
	}
	return path, nil
}
