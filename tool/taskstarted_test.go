package tool

import (
	"context"
	"testing"
)

// TaskStarted tells the listener WithTaskStarted set, and nothing
// without one.
func TestTaskStarted(t *testing.T) {
	TaskStarted(context.Background())
	told := 0
	TaskStarted(WithTaskStarted(context.Background(), func() { told++ }))
	if told != 1 {
		t.Errorf("told %d times, want once", told)
	}
}
