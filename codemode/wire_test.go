package codemode

import (
	"testing"
	"time"
)

// A program's process counts its time limit to the caller's deadline,
// not Timeout from when it got the program: its start (exec, the
// runtime's start, reading the request) comes out of the program's time,
// as the caller counts it. It used to count from its own start, and a
// slow start left a program the caller killed at the deadline (and its
// grace) still within its own time, reported as a crash, its logs lost.
func TestProcessCountsToTheCallersDeadline(t *testing.T) {
	w := wireOptions{Timeout: 30 * time.Second, Deadline: time.Now().Add(2 * time.Second)}
	if got := w.options().Timeout; got > 2*time.Second || got <= 0 {
		t.Errorf("Timeout %v, want at most the 2s left to the deadline", got)
	}
	w.Deadline = time.Now().Add(-time.Second)
	if got := w.options().Timeout; got != time.Nanosecond {
		t.Errorf("past the deadline: Timeout %v, want at once", got)
	}
	if got := (wireOptions{Timeout: 5 * time.Second}).options().Timeout; got != 5*time.Second {
		t.Errorf("without a deadline: Timeout %v, want 5s", got)
	}
	if w := wireOptionsOf(Options{Timeout: time.Second}); !w.Deadline.IsZero() {
		t.Errorf("wireOptionsOf set a deadline: %v", w.Deadline)
	}
}
