//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// A serve killed by SIGKILL, which runs no cleanup of its own, leaves none
// of its stdio servers behind, sandboxed or not: the kernel kills them with
// it (Pdeathsig), also through the sandbox's re-execution.
func TestKilledServeLeavesNoServer(t *testing.T) {
	mcptest.RequireLandlock(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := twoServerConfig(t)
	cmd := exec.Command(exe, "serve", "--stdio", "--config", cfg)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	stdin, err := cmd.StdinPipe() // serve --stdio runs while its stdin is open
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var servers []int
	mcptest.Eventually(t, 30*time.Second, func() bool {
		servers = serverChildren(cmd.Process.Pid)
		return len(servers) == 2
	}, "serve to start its two servers (have %v)", &servers)

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for _, pid := range servers {
		mcptest.Eventually(t, 30*time.Second, func() bool { return gone(pid) },
			"server pid %d to die with serve", pid)
	}
}

// twoServerConfig writes a config with two fixture servers, one of them
// sandboxed. Each outlives its stdin, as a server may: after the fixture
// exits the shell becomes a sleep, so only the kernel ends it with serve.
// (The sandboxed shell may not read the test binary, so its fixture fails
// at once and it is a sleep from the start: what matters is the process.)
func twoServerConfig(t *testing.T) string {
	fixture, fixtureArgs, env := mcptest.ChildCommand(t, "fixture")
	command := "/bin/sh"
	args := []string{`"$0" "$1"; exec sleep 600`, fixture, fixtureArgs[0]}
	var envLines strings.Builder
	for k, v := range env {
		fmt.Fprintf(&envLines, "      %s: %q\n", k, v)
	}
	var cfg strings.Builder
	for _, name := range []string{"plain", "boxed"} {
		fmt.Fprintf(&cfg, "- id: %[1]s\n  name: mcp-client\n  config:\n    serverName: %[1]s\n    transport: stdio\n"+
			"    command: %[2]q\n    args: [\"-c\", %[3]q, %[4]q, %[5]q]\n    env:\n%[6]s", name, command, args[0], args[1], args[2], envLines.String())
		if name == "boxed" {
			cfg.WriteString("    sandbox: {}\n")
		}
	}
	path := filepath.Join(t.TempDir(), "mcpbridge.yaml")
	if err := os.WriteFile(path, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// serverChildren returns the children of pid that run a server: exec'd
// already, not the sandbox's re-execution on its way to the server.
func serverChildren(pid int) []int {
	var out []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range dirs {
		child, _ := strconv.Atoi(filepath.Base(dir))
		if parent(child) != pid {
			continue
		}
		if cmdline, err := os.ReadFile(dir + "/cmdline"); err == nil && !strings.Contains(string(cmdline), "__sandbox-exec") {
			out = append(out, child)
		}
	}
	return out
}

// stat returns the fields of /proc/pid/stat after the command name, which
// may hold spaces: state, ppid, ...; nil when pid is gone.
func stat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}

func parent(pid int) int {
	f := stat(pid)
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// gone reports whether pid has exited: no longer listed, or a zombie
// waiting for whoever inherited it.
func gone(pid int) bool {
	f := stat(pid)
	return len(f) == 0 || f[0] == "Z"
}
