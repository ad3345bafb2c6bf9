// Package termio reads what a person types at the terminal: lines that
// give up when a context ends (LineReader: an elicitation's answers), and
// a line editor that reads a single key press in raw mode (Console: the
// agent's prompt and its approvals). The CLI owns the terminal; these only
// read from it.
package termio

import (
	"bufio"
	"context"
	"errors"
	"io"
)

// MaxLine bounds one line a person types: a longer line is cut.
const MaxLine = 64 << 10

// LineReader reads a person's answers from stdin one line at a time,
// giving up when the waiting context ends (an interrupt while a form is
// asked must not hang). One read is in flight at most: a read the context
// abandoned is the next answer, and its goroutine ends when the line (or
// the end of input) arrives.
type LineReader struct {
	br      *bufio.Reader
	pending chan lineRead // the read in flight, or nil
}

type lineRead struct {
	line string
	err  error
}

// NewLineReader reads lines of r.
func NewLineReader(r io.Reader) *LineReader {
	return &LineReader{br: bufio.NewReaderSize(r, 4096)}
}

// Next returns the next line without its line ending; io.EOF when the
// input ended without one.
func (l *LineReader) Next(ctx context.Context) (string, error) {
	if l.pending == nil {
		ch := make(chan lineRead, 1)
		l.pending = ch
		go func() { ch <- l.read() }()
	}
	select {
	case r := <-l.pending:
		l.pending = nil
		return r.line, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// read reads one line, keeping at most MaxLine of it.
func (l *LineReader) read() lineRead {
	var line []byte
	for {
		chunk, err := l.br.ReadSlice('\n')
		if len(line) < MaxLine {
			line = append(line, chunk[:min(len(chunk), MaxLine-len(line))]...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && len(line) == 0:
			return lineRead{err: err}
		}
		return lineRead{line: trimEOL(string(line))}
	}
}

// trimEOL drops a trailing "\n" or "\r\n".
func trimEOL(s string) string {
	if n := len(s); n > 0 && s[n-1] == '\n' {
		s = s[:n-1]
	}
	if n := len(s); n > 0 && s[n-1] == '\r' {
		s = s[:n-1]
	}
	return s
}
