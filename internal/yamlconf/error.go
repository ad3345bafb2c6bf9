package yamlconf

import (
	"errors"
	"fmt"
	"strings"
)

// Error is one problem in a YAML document, with the position of the node it
// concerns. Line and Column are 1-based; 0 means the position is unknown (a
// missing block, or a value built in Go rather than read from YAML).
type Error struct {
	Line, Column int
	// Path names the offending value, like config.reconnect.maxAttempts or
	// config.args[2]; empty when the problem concerns no single value.
	Path string
	// Msg says what is wrong and, where it helps, how to fix it.
	Msg string
}

// Error renders "<line>:<col>: <path>: <msg>", leaving out the parts that are
// unknown, so that editors and terminals can jump to the spot.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "%d:", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, "%d:", e.Column)
		}
		b.WriteByte(' ')
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in one document, in document order, so that a
// user fixes a file in one pass instead of one error per run.
type Errors []*Error

// Error renders one problem per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap exposes the individual problems to errors.As and errors.Is.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// AsErrors returns the positioned problems inside err: the Errors or *Error it
// wraps, or nil when err carries no position information.
func AsErrors(err error) Errors {
	var es Errors
	if errors.As(err, &es) {
		return es
	}
	var e *Error
	if errors.As(err, &e) {
		return Errors{e}
	}
	return nil
}
