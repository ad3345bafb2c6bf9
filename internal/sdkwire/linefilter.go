package sdkwire

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The stdio server side (assumption 16 of the package doc): mcp.IOTransport
// ends a session at the first line that is not a JSON-RPC message, so a
// server that wants to answer such a line and go on reads through a
// LineFilter, and writes through a LockedWriter so its answers never cut
// into the SDK's frames.

// LineFilter is the reading side of a stdio server session, the Reader of
// an mcp.IOTransport (beside Close, which the caller adds): it hands the
// SDK each line that is a JSON-RPC message or a batch of them, trimmed and
// ending in one newline, and holds back every other line, telling its
// reject function why. Blank lines are skipped.
type LineFilter struct {
	in      *bufio.Reader
	maxLine int
	reject  func(id json.RawMessage, why *jsonrpc.Error)
	pending []byte // the admitted line not yet read
	err     error  // the source's error, returned once pending is drained
}

// NewLineFilter returns a filter reading in (used as is when it is a
// *bufio.Reader). maxLine bounds a line, in bytes not counting its
// line end ("\n" or "\r\n"); it must not exceed the MaxLineLength of the transport reading
// through the filter. reject is called, on the reading goroutine, for each line held
// back: with the raw JSON id of the message at fault (empty when it has
// none or the line is not JSON) and a JSON-RPC error saying what is wrong
// (-32700 for invalid JSON, -32600 otherwise).
func NewLineFilter(in io.Reader, maxLine int, reject func(id json.RawMessage, why *jsonrpc.Error)) *LineFilter {
	br, ok := in.(*bufio.Reader)
	if !ok {
		br = bufio.NewReader(in)
	}
	return &LineFilter{in: br, maxLine: maxLine, reject: reject}
}

// Read reads from the next admitted line.
func (f *LineFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, err := f.readLine()
		f.err = err
		if line = bytes.TrimSpace(line); len(line) > 0 {
			if admitted := f.admit(line); admitted != nil {
				f.pending = append(admitted, '\n')
			}
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// readLine returns the next line without its newline. A line longer than
// maxLine, not counting its line end ("\n" or "\r\n"), is rejected and
// skipped (nil line).
func (f *LineFilter) readLine() ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := f.in.ReadSlice('\n')
		if !tooLong {
			line = append(line, chunk...)
			// The line end ("\r\n" at most) is not the message's.
			if len(line)-len("\r\n") > f.maxLine {
				tooLong, line = true, nil
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if !tooLong && len(trimLineEnd(line)) > f.maxLine {
			tooLong, line = true, nil
		}
		if tooLong {
			f.reject(nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("Invalid Request: message longer than %d bytes", f.maxLine)})
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

// MaxBatch bounds the messages of one JSON-RPC batch a LineFilter admits;
// a longer batch is rejected whole.
const MaxBatch = 1000

// admit returns what of line the SDK may read: the line when it is a
// JSON-RPC message, a batch of the messages of a batch that are (each of
// the others rejected on its own, as JSON-RPC 2.0 answers a batch), or nil
// when nothing is left.
func (f *LineFilter) admit(line []byte) []byte {
	if !json.Valid(line) {
		f.reject(nil, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "Parse error: the message is not valid JSON"})
		return nil
	}
	if line[0] != '[' {
		if !f.valid(line) {
			return nil
		}
		return line
	}
	// Counted before it is taken apart: a batch too long costs no slice
	// and copy per element.
	switch n := countElements(line); {
	case n == 0:
		f.reject(nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: an empty batch"})
		return nil
	case n > MaxBatch:
		f.reject(nil, batchTooLong(n))
		return nil
	}
	// A fresh slice: decoding into msgs would overwrite line's bytes.
	var batch []json.RawMessage
	json.Unmarshal(line, &batch) // a valid JSON array: never fails
	kept := batch[:0]
	for _, m := range batch {
		if f.valid(m) {
			kept = append(kept, m)
		}
	}
	switch {
	case len(kept) == 0:
		return nil
	case len(kept) == len(batch):
		return line
	}
	out, _ := json.Marshal(kept) // raw messages that are valid JSON: never fails
	return out
}

// valid reports whether m is one JSON-RPC message whose id can be answered
// exactly (ScreenFrame), and rejects it when it is not.
func (f *LineFilter) valid(m []byte) bool {
	if _, err := decodeMessage(m); err != nil {
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(m, &probe) // a non-object leaves ID empty
		f.reject(probe.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: " + err.Error()})
		return false
	}
	if r := screenMessage(m); r != nil {
		f.reject(r.ID, r.Err)
		return false
	}
	return true
}

// LockedWriter serializes the Writes to a stdio session's output, the
// Writer of an mcp.IOTransport, so frames written beside the SDK's (the
// answers to lines a LineFilter held back) never cut into them: the SDK
// writes each frame in one Write call (assumption 16).
type LockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

// NewLockedWriter returns a LockedWriter writing to w.
func NewLockedWriter(w io.WriteCloser) *LockedWriter { return &LockedWriter{w: w} }

// Write writes p in one Write call to the underlying writer, after any
// other Write has returned.
func (l *LockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close closes the underlying writer.
func (l *LockedWriter) Close() error { return l.w.Close() }
