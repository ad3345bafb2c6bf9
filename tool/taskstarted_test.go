package tool

import (
	"context"
	"slices"
	"testing"
)

// TaskStarted tells the listener WithTaskStarted set the id the task is
// followed by, and nothing without one.
func TestTaskStarted(t *testing.T) {
	TaskStarted(context.Background(), "t1")
	var told []string
	TaskStarted(WithTaskStarted(context.Background(), func(id string) { told = append(told, id) }), "t1")
	if !slices.Equal(told, []string{"t1"}) {
		t.Errorf("told %q, want t1 once", told)
	}
}
