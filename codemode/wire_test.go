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
	deadline := time.Now().Add(2 * time.Second)
	w := wireOptions{Timeout: 30 * time.Second, Deadline: deadline}
	if got := w.end(); !got.Equal(deadline) || w.options().Timeout != 30*time.Second {
		t.Errorf("the process's time limit ends at %v and is %v, want the caller's deadline %v and its 30s", got, w.options().Timeout, deadline)
	}
	before := time.Now()
	if got := (wireOptions{Timeout: 5 * time.Second}).end(); got.Before(before.Add(5 * time.Second)) {
		t.Errorf("without a deadline: ends %v after its start, want 5s", got.Sub(before))
	}
	if w := wireOptionsOf(Options{Timeout: time.Second}); !w.Deadline.IsZero() {
		t.Errorf("wireOptionsOf set a deadline: %v", w.Deadline)
	}
}
