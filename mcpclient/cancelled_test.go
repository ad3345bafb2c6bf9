package mcpclient

import (
	"context"
	"errors"
	"testing"
)

// A call the caller ended says so in words, not as Go's "context
// canceled" or "context deadline exceeded", and errors.Is still finds
// the cause.
func TestCancelledSaysWhyInWords(t *testing.T) {
	gone := errors.New("the client left")
	for _, c := range []struct {
		cause error
		want  string
	}{
		{context.DeadlineExceeded, "tool call cancelled: the caller's time limit passed"},
		{context.Canceled, "tool call cancelled by the caller"},
		{gone, "tool call cancelled: the client left"},
	} {
		err := cancelled(c.cause)
		if err.Error() != c.want || !errors.Is(err, c.cause) {
			t.Errorf("cancelled(%v) = %q (errors.Is %v), want %q", c.cause, err, errors.Is(err, c.cause), c.want)
		}
	}
}
