// Package confpos is the error type of a configuration problem at a place
// in a YAML file, for plugin kinds that live outside this module.
//
// A [host.Kind] decodes an entry's config node without knowing the file it
// came from. It reports each problem as an [Error] carrying the line and
// column of the node concerned (yaml.v3 nodes have both), the path of the
// value and a message, and returns them all at once as [Errors]. The host
// fills in the file and the entry (the same type serves it), so the user reads
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
	"strconv"
	"strings"
)

// Error is one problem in a YAML document, with the position of the node it
// concerns. Line and Column are 1-based; 0 means the position is unknown (a
// missing block, or a value built in Go rather than read from YAML).
//
// A Kind sets the position, Path and Msg. File, EntryID and EntryIndex are
// the host's: it fills them in when it reports the problem, and they stay
// empty in a Kind's errors.
type Error struct {
	// File is the name the caller gave for the composition file.
	File         string
	Line, Column int
	// EntryID is the id of the entry concerned; when the entry has no
	// usable id, EntryIndex (1-based position in the list) names it
	// instead.
	EntryID    string
	EntryIndex int
	// Path names the offending value, like config.reconnect.maxAttempts or
	// config.args[2]; empty when the problem concerns no single value.
	Path string
	// Msg says what is wrong and, where it helps, how to fix it.
	Msg string
}

// Error renders "<file>:<line>:<col>: entry "<id>": <path>: <msg>", leaving
// out the parts that are unknown or do not apply (a Kind's error has no file
// or entry, a file-level problem no entry), so that editors and terminals
// can jump to the spot.
func (e *Error) Error() string {
	var b strings.Builder
	where := e.position()
	switch {
	case e.File != "" && where != "":
		b.WriteString(e.File + ":" + where + ": ")
	case e.File != "":
		b.WriteString(e.File + ": ")
	case where != "":
		b.WriteString(where + ": ")
	}
	switch {
	case e.EntryID != "":
		fmt.Fprintf(&b, "entry %q: ", e.EntryID)
	case e.EntryIndex > 0:
		fmt.Fprintf(&b, "entry #%d: ", e.EntryIndex)
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// position is "<line>:<col>", "<line>" or "" as far as they are known.
func (e *Error) position() string {
	switch {
	case e.Line <= 0:
		return ""
	case e.Column <= 0:
		return strconv.Itoa(e.Line)
	}
	return strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Column)
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
