//go:build linux

package childproc

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// stderrLines collects a child's stderr lines and tells when one arrives.
type stderrLines struct {
	mu    sync.Mutex
	lines []string
	more  chan struct{}
}

func newStderrLines() *stderrLines { return &stderrLines{more: make(chan struct{}, 64)} }

func (s *stderrLines) add(line string) {
	s.mu.Lock()
	s.lines = append(s.lines, line)
	s.mu.Unlock()
	s.more <- struct{}{}
}

func (s *stderrLines) get() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.lines)
}

// await waits until the child has written line.
func (s *stderrLines) await(t *testing.T, line string) {
	t.Helper()
	deadline := time.After(hangGuard)
	for !slices.Contains(s.get(), line) {
		select {
		case <-s.more:
		case <-deadline:
			t.Fatalf("the child never wrote %q; it wrote %q", line, s.get())
		}
	}
}

// startOnHandClock starts the helper behaviour with a close grace of
// 150ms on a HandClock, collecting its stderr, and waits until it is
// ready.
func startOnHandClock(t *testing.T, behaviour string) (mcp.Connection, *Process, *mcptest.HandClock, *stderrLines) {
	t.Helper()
	clock := mcptest.NewHandClock()
	stderr := newStderrLines()
	tr := helperTransport(t, behaviour)
	tr.CloseGrace, tr.After, tr.Stderr = 150*time.Millisecond, clock.After, stderr.add
	conn := connect(t, tr)
	readNote(t, conn, "ready")
	killLater(t, tr.Process().PID())
	return conn, tr.Process(), clock, stderr
}

// A child that ignores stdin EOF is signalled when the close grace runs
// out on the ladder's clock, not before, and not after a wait of any other
// length: first the child sees EOF, then the ladder waits CloseGrace, then
// SIGTERM comes.
func TestLadderSignalsWhenCloseGraceRunsOut(t *testing.T) {
	conn, p, clock, stderr := startOnHandClock(t, "report-term")

	closed := make(chan error, 1)
	go func() { closed <- conn.Close() }()
	w := clock.Next(t)
	if w.D != 150*time.Millisecond {
		t.Errorf("the ladder's first wait is %v, want CloseGrace (150ms)", w.D)
	}
	stderr.await(t, "stdin ended")
	select {
	case <-p.Exited():
		t.Fatal("the child exited before the close grace ran out")
	default:
	}
	w.Fire()
	if err := <-closed; err != nil {
		t.Errorf("Close() = %v, want nil (the child exits 0 on SIGTERM)", err)
	}
	if diff := cmp.Diff([]string{"stdin ended", "got SIGTERM"}, stderr.get()); diff != "" {
		t.Errorf("the child's account (-want +got):\n%s", diff)
	}
}

// A child that exits on stdin EOF, after a cleanup, is never signalled
// while its grace lasts: the ladder only waits.
func TestLadderLetsChildExitOnEOF(t *testing.T) {
	conn, _, clock, stderr := startOnHandClock(t, "cleanup-on-eof")

	if err := conn.Close(); err != nil { // the grace never runs out
		t.Errorf("Close() = %v, want nil", err)
	}
	if diff := cmp.Diff([]string{"stdin ended", "cleaned up"}, stderr.get()); diff != "" {
		t.Errorf("the child's account (-want +got):\n%s", diff)
	}
	if w := clock.Next(t); w.D != 150*time.Millisecond {
		t.Errorf("the ladder waited %v, want CloseGrace (150ms)", w.D)
	}
	if w, ok := clock.Started(); ok {
		t.Errorf("the ladder started a second wait (%v): it signalled a child that was exiting", w.D)
	}
}
