package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/tool"
)

func TestStderrTail(t *testing.T) {
	const secret = "sk-very-secret-token-123"
	cfg := Config{Env: map[string]string{"API_TOKEN": secret, "PORT": "3000"}, Headers: map[string]string{"Authorization": "Bearer " + secret}}
	numbered := func(n, size int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("%02d", i)+strings.Repeat("x", size-2))
		}
		return out
	}
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"the last lines", numbered(15, 10), numbered(15, 10)[5:]},
		{"blank lines skipped", []string{"cause", "", "  ", "\t"}, []string{"cause"}},
		{"the bytes bounded", numbered(10, 200), numbered(10, 200)[3:]},
		{"a long line cut", []string{strings.Repeat("é", 200)}, []string{strings.Repeat("é", 120) + "…"}},
		{"a longer line cut at a rune", []string{"x" + strings.Repeat("é", 200)}, []string{"x" + strings.Repeat("é", 119) + "…"}},
		{"secrets and URLs redacted", []string{"key " + secret + " on port 3000", "GET https://registry.npmjs.org/pkg?token=abc failed"},
			[]string{"key [redacted] on port 3000", "GET https://registry.npmjs.org/… failed"}},
		{"control characters escaped", []string{"\x1b[31mred\tcell\a"}, []string{`\x1b[31mred\tcell\x07`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tail, r := newStderrTail(errorBounds), newRedactor(cfg)
			for _, line := range tt.in {
				tail.add(r.line(line))
			}
			if diff := cmp.Diff(tt.want, tail.Lines()); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

// failingScript is a stdio server that dies before the handshake saying
// why on stderr, as npx does for a package that is not cached, with the
// entry's secret and a URL with a token in what it prints.
const failingScript = `echo 'npm error code ENOTCACHED' >&2
echo "npm error request to https://registry.npmjs.org/pkg?token=abc failed, key $API_TOKEN" >&2
printf 'bell\a\n' >&2
exit 1`

const scriptSecret = "sk-very-secret-token-123"

// wantFailingCause is how an error quotes failingScript's stderr.
const wantFailingCause = `exit status 1); stderr: npm error code ENOTCACHED | npm error request to https://registry.npmjs.org/… failed, key [redacted] | bell\x07`

func failingConfig(name string) Config {
	return Config{ServerName: name, Transport: TransportStdio, Command: "sh", Args: []string{"-c", failingScript},
		Env: map[string]string{"API_TOKEN": scriptSecret}}
}

// A server that fails to start says why: its exit status and the last
// lines of its stderr, redacted and escaped, are in the start error and
// the status of a one-shot command, and in the log of a long-running
// bridge (the gateway's).
func TestStartupFailureQuotesStderr(t *testing.T) {
	t.Run("one-shot", func(t *testing.T) {
		h, err := start(t, failingConfig("typo"), Options{OneShot: true})
		if err == nil {
			t.Fatal("the first attempt succeeded")
		}
		for what, text := range map[string]string{"start error": err.Error(), "status": h.srv.Status().Err} {
			if !strings.Contains(text, `calling "initialize"`) || !strings.Contains(text, `(child "sh" (pid `) || !strings.Contains(text, wantFailingCause) {
				t.Errorf("%s = %q, want the handshake's failure, then %q", what, text, wantFailingCause)
			}
			if strings.Contains(text, scriptSecret) {
				t.Errorf("%s quotes the secret: %q", what, text)
			}
		}
		want := []string{"npm error code ENOTCACHED", "npm error request to https://registry.npmjs.org/… failed, key [redacted]", `bell\x07`}
		if diff := cmp.Diff(want, h.srv.Status().Stderr); diff != "" {
			t.Errorf("the recent stderr in Status (-want +got):\n%s", diff)
		}
	})
	t.Run("long-running", func(t *testing.T) {
		cfg := failingConfig("typo")
		cfg.Reconnect = &ReconnectPolicy{Enabled: false, InitialDelay: time.Second, MaxDelay: time.Second, MaxAttempts: 1}
		h, _ := start(t, cfg, Options{})
		if !h.log.HasRecord(slog.LevelWarn, "connection attempt failed", "server", "typo", "err", mcptest.Contains(wantFailingCause)) {
			t.Errorf("no warning quotes the cause %q; log:\n%s", wantFailingCause, h.log.Text())
		}
		// The lines logged as they come are redacted too.
		if !h.log.HasRecord(slog.LevelInfo, "child output", "line", "npm error request to https://registry.npmjs.org/… failed, key [redacted]") ||
			strings.Contains(h.log.Text(), scriptSecret) {
			t.Errorf("the child's lines are logged unredacted; log:\n%s", h.log.Text())
		}
	})
}

// dyingFixture is the fixture child run by sh, which says why it died on
// stderr once the fixture is gone, as a runtime out of memory does.
func dyingFixture(t *testing.T, name string) Config {
	exe, args, env := mcptest.ChildCommand(t, "fixture")
	script := `"$0" "$@"; echo 'FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory' >&2; exit 9`
	return Config{ServerName: name, Transport: TransportStdio, Command: "sh",
		Args: append([]string{"-c", script, exe}, args...), Env: env}
}

// quotedDeath are the parts of an error that quotes dyingFixture's death:
// the shell may say "Killed" of the fixture between them.
var quotedDeath = []string{"exit status 9; stderr: ", "| FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory"}

// childOf returns the one child of process pid.
func childOf(t *testing.T, pid int) int {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatalf("children of %d: %q", pid, raw)
	}
	return child
}

// A server that dies during a call says why: the call's error, the status
// and the log quote the last lines of its stderr.
func TestDeathQuotesStderr(t *testing.T) {
	cfg := dyingFixture(t, "dying")
	cfg.Reconnect = &ReconnectPolicy{Enabled: false, InitialDelay: time.Second, MaxDelay: time.Second, MaxAttempts: 1}
	h := mustStart(t, cfg, Options{})
	fixture := childOf(t, h.srv.Status().PID)

	inFlight := make(chan struct{}, 1)
	ctx := tool.WithProgress(context.Background(), func(tool.Progress) {
		select {
		case inFlight <- struct{}{}:
		default:
		}
	})
	slow, _ := h.reg.Get("mcp__dying__slow")
	done := make(chan error, 1)
	go func() {
		_, err := slow.Execute(ctx, json.RawMessage(`{"ms":60000}`))
		done <- err
	}()
	waitSignal(t, inFlight, "the call to be in flight")
	if err := killPID(fixture); err != nil {
		t.Fatal(err)
	}
	quotes := func(text string) bool {
		return strings.Contains(text, quotedDeath[0]) && strings.HasSuffix(text, quotedDeath[1])
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the call did not end when the server died")
	}
	if err == nil || !strings.Contains(err.Error(), `server "dying" connection lost during the call`) || !quotes(err.Error()) {
		t.Errorf("call error = %v, want the exit status and the stderr's last lines", err)
	}
	waitFor(t, "the failed state", func() bool { return h.srv.Status().State == StateFailed })
	if got := h.srv.Status().Err; !quotes(got) {
		t.Errorf("status = %q, want the exit status and the stderr's last lines", got)
	}
	if !h.log.HasRecord(slog.LevelWarn, "connection lost", "server", "dying", "err", mcptest.Contains(quotedDeath...)) {
		t.Errorf("no warning quotes the cause; log:\n%s", h.log.Text())
	}
}

// killPID sends SIGKILL to pid.
func killPID(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// A child writing 100,000 lines to stderr gets as many logged as the
// rate limit of a server's log lines lets through in that time, and the
// rest counted in a warning once it exits; its recent stderr in Status
// still ends with its last line.
func TestChildStderrFloodRateLimited(t *testing.T) {
	const n = 100000
	exe, args, env := mcptest.ChildCommand(t, "fixture")
	script := `yes 'stderr noise' | head -n 100000 >&2; echo 'the last line' >&2; exec "$0" "$@"`
	cfg := Config{ServerName: "noisy", Transport: TransportStdio, Command: "sh", Args: append([]string{"-c", script, exe}, args...), Env: env}
	began := time.Now()
	h := mustStart(t, cfg, Options{})
	waitFor(t, "the child's last stderr line", func() bool {
		lines := h.srv.Status().Stderr
		return len(lines) > 0 && lines[len(lines)-1] == "the last line"
	})
	elapsed := time.Since(began)
	logged := h.log.CountRecords(slog.LevelInfo, "child output")
	if most := logLineBurst + int(elapsed.Seconds()*logLinesPerSecond) + logLinesPerSecond; logged > most {
		t.Errorf("%d of %d stderr lines logged in %v; the limit lets %d through", logged, n, elapsed, most)
	}
	h.srv.Close()
	// Reported once it exited (the child's own lines after the flood may
	// be logged or dropped too).
	var dropped int64
	var all int
	waitFor(t, "the dropped lines to be reported", func() bool {
		dropped, all = 0, h.log.CountRecords(slog.LevelInfo, "child output")
		for _, r := range h.log.Records() {
			if r.Message == "child output lines dropped: over the rate limit" {
				for _, a := range r.Attrs {
					if a.Key == "dropped" {
						dropped += a.Value.Int64()
					}
				}
			}
		}
		return int(dropped)+all >= n+1
	})
	if dropped > n+1 {
		t.Errorf("%d lines logged and %d counted as dropped, of %d", all, dropped, n+1)
	}
}

// A stdio server slow to start (it reads nothing of its stdin meanwhile)
// is waited for past the server/discover probe's bound and spoken to on
// 2026-07-28: the bound runs from when it has read the probe. Taken for
// one that ignores the probe, it read the probe late, took it for its
// handshake and refused the fallback initialize as a duplicate, failing
// the attempt (and each attempt after it, as slow).
func TestSlowStdioServerNotTakenForSilent(t *testing.T) {
	exe, args, env := mcptest.ChildCommand(t, "fixture")
	cfg := Config{ServerName: "slow", Transport: TransportStdio, Command: "sh", Args: append([]string{"-c", `sleep 2; exec "$0" "$@"`, exe}, args...), Env: env}
	// A bound shorter than the start, long enough to answer in once read.
	h, err := start(t, cfg, Options{probeBound: time.Second})
	if err != nil {
		t.Fatalf("first attempt failed: %v\nlog:\n%s", err, h.log.Text())
	}
	if v := h.srv.Status().ProtocolVersion; v != "2026-07-28" {
		t.Errorf("negotiated %q, want 2026-07-28", v)
	}
	if h.log.HasRecord(slog.LevelWarn, "server/discover got no answer; falling back to initialize — set protocolVersion: 2025-11-25 to skip the probe") {
		t.Errorf("a server slow to start was taken for one that ignores the probe:\n%s", h.log.Text())
	}
}
