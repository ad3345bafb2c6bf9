// Package confpos is the error type of a configuration problem at a place
// in a YAML file, for plugin kinds that live outside this module.
//
// A [host.Kind] decodes an entry's config node without knowing the file it
// came from. It reports each problem as an [Error] carrying the line and
// column of the node concerned (yaml.v3 nodes have both), the path of the
// value and a message, and returns them all at once as [Errors]. The host
// puts the file and the entry in front, so the user reads
// "<file>:<line>:<col>: entry "<id>": <path>: <message>"; a problem without
// a position is placed at the entry.
//
// Messages must never quote a value that may have come from ${VAR}
// expansion: such values are often secrets.
//
// [host.Kind]: https://pkg.go.dev/github.com/mcpbridge/mcpbridge/host#Kind
package confpos

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
