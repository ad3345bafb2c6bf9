package mcptest

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

func TestEventually(t *testing.T) {
	var n atomic.Int32
	Eventually(t, waitLimit, func() bool { return n.Add(1) >= 3 }, "three polls")
	if got := n.Load(); got != 3 {
		t.Errorf("cond ran %d times, want 3", got)
	}

	f := runFake(t, func(tb testing.TB) {
		Eventually(tb, 10*time.Millisecond, func() bool { return false }, "the %s", "impossible")
	})
	if want := "timed out after 10ms waiting for the impossible"; f.fatal != want {
		t.Errorf("fatal = %q, want %q", f.fatal, want)
	}
}

// Log.WaitFor's failure shows the log as it was when the wait gave up, not
// when it began.
func TestLogTextIsLazy(t *testing.T) {
	l := NewLog()
	l.Logger().Info("early")
	x := logText{l}
	l.Logger().Info("late")
	if got, want := fmt.Sprint(x), "INFO early\nINFO late"; got != want {
		t.Errorf("logText = %q, want %q", got, want)
	}
}
