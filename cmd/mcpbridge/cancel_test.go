package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
)

// slowConfig is a config with one fixture server (this test binary),
// "once", that traces the notifications it reads to the file trace, its
// calls timing out after timeoutMs.
func slowConfig(t *testing.T, trace string, timeoutMs int) string {
	return childConfig(t, "fixture", "once", fmt.Sprintf("    toolCallTimeoutMs: %d\n", timeoutMs), mcppeer.NotifyTraceEnv+"="+trace)
}

// A one-shot `call` that times out, or is interrupted, tells the server
// before the process exits: the notifications/cancelled that the SDK sends
// on a goroutine of its own reaches the server every time (before the
// flush, about half of such calls lost it at exit).
func TestOneShotCallCancelReachesServer(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const rounds = 12
	lost := 0
	for i := range rounds {
		trace := filepath.Join(t.TempDir(), "trace")
		interrupt := i%2 == 1
		timeoutMs := 200
		if interrupt {
			timeoutMs = 60_000
		}
		cmd := exec.Command(exe, "call", "--config", slowConfig(t, trace, timeoutMs), "mcp__once__slow", `{"ms":60000}`)
		cmd.Env = append(os.Environ(), runMainEnv+"=1")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if interrupt {
			waitForLine(t, trace, "received tools/call")
			cmd.Process.Signal(syscall.SIGINT)
		}
		if err := cmd.Wait(); err == nil {
			t.Fatalf("round %d: the slow call succeeded", i)
		}
		if b, _ := os.ReadFile(trace); !strings.Contains(string(b), "received notifications/cancelled") {
			lost++
			t.Logf("round %d (interrupted %v): the server read only:\n%s", i, interrupt, b)
		}
	}
	if lost > 0 {
		t.Errorf("notifications/cancelled lost in %d of %d one-shot calls", lost, rounds)
	}
}

// waitForLine waits until the file at path holds line.
func waitForLine(t *testing.T, path, line string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile(path); strings.Contains(string(b), line) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never held %q", path, line)
}
