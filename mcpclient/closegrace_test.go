package mcpclient

import (
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/childproc"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

func TestCloseGrace(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want time.Duration
	}{
		{"long-running: childproc's default", Options{}, 0},
		{"one-shot: the short window", Options{OneShot: true}, OneShotCloseGrace},
		{"set: as set", Options{CloseGrace: 3 * time.Second}, 3 * time.Second},
		{"set on a one-shot: as set", Options{OneShot: true, CloseGrace: 3 * time.Second}, 3 * time.Second},
	}
	for _, tt := range tests {
		if got := closeGrace(tt.opts); got != tt.want {
			t.Errorf("%s: closeGrace = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// wrappedFixture is the fixture child run by sh, which writes "stdin
// ended" once the fixture has exited on stdin EOF, then runs tail (shell
// commands) and reports a SIGTERM as "got SIGTERM".
func wrappedFixture(t *testing.T, name, tail string) Config {
	exe, args, env := mcptest.ChildCommand(t, "fixture")
	script := `trap 'echo got SIGTERM >&2; exit 0' TERM; "$0" "$@"; echo stdin ended >&2; ` + tail
	return Config{ServerName: name, Transport: TransportStdio, Command: "sh",
		Args: append([]string{"-c", script, exe}, args...), Env: env}
}

// startLadder starts cfg with the ladder on clock and the close grace
// options left unset, and waits until it is ready.
func startLadder(t *testing.T, cfg Config, oneShot bool, clock *mcptest.HandClock) (*Server, *mcptest.Log) {
	t.Helper()
	h := mustStart(t, cfg, Options{OneShot: oneShot, ladderAfter: clock.After})
	return h.srv, h.log
}

// childLines is what the child wrote on stderr, in order.
func childLines(log *mcptest.Log) []string {
	var lines []string
	for _, r := range log.Records() {
		if r.Message != "child output" {
			continue
		}
		for _, a := range r.Attrs {
			if a.Key == "line" {
				lines = append(lines, a.Value.String())
			}
		}
	}
	return lines
}

// A one-shot command's server that ignores stdin EOF is sent SIGTERM when
// the short window (OneShotCloseGrace) runs out, not the full grace: the
// child sees EOF, the ladder waits OneShotCloseGrace, then SIGTERM comes.
func TestOneShotCloseSignalsServerIgnoringEOF(t *testing.T) {
	clock := mcptest.NewHandClock()
	srv, log := startLadder(t, wrappedFixture(t, "stays", "sleep 300 & wait"), true, clock)

	closed := make(chan error, 1)
	go func() { closed <- srv.Close() }()
	w := clock.Next(t)
	if w.D != OneShotCloseGrace {
		t.Errorf("the ladder gave the child %v to exit on EOF, want OneShotCloseGrace (%v)", w.D, OneShotCloseGrace)
	}
	log.WaitForRecord(t, slog.LevelInfo, "child output", "line", "stdin ended")
	w.Fire()
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
	if diff := cmp.Diff([]string{"stdin ended", "got SIGTERM"}, childLines(log)); diff != "" {
		t.Errorf("the child's stderr (-want +got):\n%s\nlog:\n%s", diff, log.Text())
	}
}

// A server that exits on stdin EOF keeps its grace, one-shot or not: the
// ladder waits (the full grace when long-running) and never signals it,
// even when it cleans up first.
func TestCloseLetsServerExitOnEOF(t *testing.T) {
	for _, tt := range []struct {
		name    string
		oneShot bool
		want    time.Duration
	}{
		{"long-running", false, childproc.DefaultCloseGrace},
		{"one-shot", true, OneShotCloseGrace},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clock := mcptest.NewHandClock() // its waits never run out
			srv, log := startLadder(t, wrappedFixture(t, "polite", "sleep 0.1; echo cleaned up >&2"), tt.oneShot, clock)
			if err := srv.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if w := clock.Next(t); w.D != tt.want {
				t.Errorf("the ladder gave the child %v to exit on EOF, want %v", w.D, tt.want)
			}
			if w, ok := clock.Started(); ok {
				t.Errorf("the ladder started a second wait (%v): it signalled a server that was exiting", w.D)
			}
			if diff := cmp.Diff([]string{"stdin ended", "cleaned up"}, childLines(log)); diff != "" {
				t.Errorf("the child's stderr (-want +got):\n%s\nlog:\n%s", diff, log.Text())
			}
		})
	}
}
