package mcptest

import (
	"testing"
	"time"
)

func TestHandClock(t *testing.T) {
	c := NewHandClock()
	if _, ok := c.Started(); ok {
		t.Fatal("Started reports a wait before any")
	}
	ch := c.After(time.Hour)
	w := c.Next(t)
	if w.D != time.Hour {
		t.Errorf("D = %v, want 1h", w.D)
	}
	select {
	case <-ch:
		t.Fatal("the wait ended before it was fired")
	default:
	}
	w.Fire()
	<-ch // ends now; a bug hangs the test
	c.After(time.Second)
	if w, ok := c.Started(); !ok || w.D != time.Second {
		t.Errorf("Started = %v, %v, want the 1s wait", w, ok)
	}
}
