package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

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

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-duration", "0s"}, "must be positive"},
		{[]string{"-clients", "0"}, "at least 1"},
		{[]string{"-heap-tolerance", "-1"}, "must not be negative"},
		{[]string{"extra"}, "unexpected arguments"},
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
