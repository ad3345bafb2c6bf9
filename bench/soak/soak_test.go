package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

func TestMain(m *testing.M) {
	// serve and its backends re-execute this binary.
	runIfChild()
	mcptest.VerifyTestMain(m)
}

// TestShortSoak runs the soak for a few seconds with a few clients, the
// reloader and the killer, so the driver cannot rot: the whole path (serve
// started, loaded, reloaded, its backends killed, scraped, stopped, its
// processes looked for) runs in every test run.
func TestShortSoak(t *testing.T) {
	args := []string{"-mcpbridge", "self", "-q", "-duration", "3s", "-idle", "1s", "-clients", "4", "-backends", "3",
		"-reload-every", "700ms", "-kill-every", "900ms", "-hang-bound", "20s", "-slow", "1s",
		// A few seconds cannot show a leak; the heap bound here only checks
		// that the figure is read and compared.
		"-heap-slack", "64"}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("soak %q: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, &stdout, &stderr)
	}
	out := stdout.String()
	for _, want := range []string{"call echo", "list tools", "cancelled call", "serve exit after SIGTERM: status 0", "processes left behind: 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("the summary lacks %q:\n%s", want, out)
		}
	}
	t.Log(out)
}

// TestShortLongSoak runs the long-session mode for a few seconds: each
// client's one session stays open through the idle and is closed at the
// end, and the heap profiles are written.
func TestShortLongSoak(t *testing.T) {
	dir := t.TempDir()
	args := []string{"-mcpbridge", "self", "-q", "-long-sessions", "-duration", "3s", "-idle", "1s", "-clients", "3", "-backends", "2",
		"-rate", "60", "-reload-every", "700ms", "-kill-every", "900ms", "-hang-bound", "20s", "-heap-slack", "64", "-heap-profiles", dir}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("soak %q: exit %d\nstdout:\n%s\nstderr:\n%s", args, code, &stdout, &stderr)
	}
	out := stdout.String()
	for _, want := range []string{"call echo", "connect 2025-11-25", "close 2025-11-25", "long sessions: 3 held open", "processes left behind: 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("the summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "cancelled call") || strings.Contains(out, "2026-07-28") {
		t.Errorf("the long-session mode made the default mode's operations:\n%s", out)
	}
	for _, name := range []string{"start", "load", "idle"} {
		if st, err := os.Stat(filepath.Join(dir, name+".heap.pprof")); err != nil || st.Size() == 0 {
			t.Errorf("the %s heap profile: %v", name, err)
		}
	}
	t.Log(out)
}

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-duration", "0s"}, "must be positive"},
		{[]string{"-clients", "0"}, "at least 1"},
		{[]string{"-heap-tolerance", "-1"}, "must not be negative"},
		{[]string{"extra"}, "unexpected arguments"},
		{[]string{"-long-sessions", "-rate", "0"}, "-rate must be positive"},
		{[]string{"-heap-profiles", "/tmp/x"}, "needs -mcpbridge self"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), tc.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("soak %q: exit %d, stderr %q; want 2 and %q", tc.args, code, &stderr, tc.want)
		}
	}
}

// The orphan check sees a process below the one it watches for as long as
// it runs, and not once it has ended (its pid may be reused: the start time
// tells them apart).
func TestSurvivors(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), mcppeer.ChildEnv+"=fixture")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var ch chaos
	found := false
	for _, p := range ch.note(os.Getpid()) {
		found = found || p.pid == cmd.Process.Pid
	}
	if !found {
		t.Fatalf("the child %d is not among the descendants noted", cmd.Process.Pid)
	}
	if left, err := ch.survivors(); err != nil || len(left) != 1 || left[0].pid != cmd.Process.Pid {
		t.Errorf("survivors while the child runs = %v, %v; want [%d]", left, err, cmd.Process.Pid)
	}
	stdin.Close() // the fixture exits when its stdin closes
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if left, err := ch.survivors(); err != nil || len(left) != 0 {
		t.Errorf("survivors after the child ended = %v, %v; want none", left, err)
	}
}

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		line string
		want stat
		ok   bool
	}{
		{"42 (mcpbridge) S 7 42 42 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 9 0 12345 1000 10", stat{ppid: 7, state: 'S', start: 12345}, true},
		{"43 (a ) b) (c) Z 1 43 43 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 0 0", stat{ppid: 1, state: 'Z', start: 99}, true},
		{"44 (short) S 1 2 3", stat{}, false},
		{"no parenthesis", stat{}, false},
	} {
		got, ok := parseStat([]byte(tc.line))
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseStat(%q) = %+v, %v; want %+v, %v", tc.line, got, ok, tc.want, tc.ok)
		}
	}
}

// -long-sessions reloads every 5s and kills every 7s, unless told
// otherwise.
func TestLongSessionDefaults(t *testing.T) {
	for _, tc := range []struct {
		args           []string
		reload, killer time.Duration
	}{
		{[]string{"-long-sessions"}, 5 * time.Second, 7 * time.Second},
		{[]string{"-long-sessions", "-reload-every", "2s"}, 2 * time.Second, 7 * time.Second},
		{nil, 3 * time.Second, 5 * time.Second},
	} {
		o, err := parseFlags(tc.args, io.Discard)
		if err != nil || o.reloadEvery != tc.reload || o.killEvery != tc.killer {
			t.Errorf("soak %q: reload every %v, kill every %v, %v; want %v, %v", tc.args, o.reloadEvery, o.killEvery, err, tc.reload, tc.killer)
		}
	}
}
