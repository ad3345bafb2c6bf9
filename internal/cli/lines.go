package cli

import (
	"bufio"
	"context"
	"errors"
	"io"
)

// maxAnswerBytes bounds one line a person types: a longer line is cut.
const maxAnswerBytes = 64 << 10

// lineReader reads a person's answers from stdin one line at a time,
// giving up when the waiting context ends (an interrupt while a form is
// asked must not hang). One read is in flight at most: a read the context
// abandoned is the next answer, and its goroutine ends when the line (or
// the end of input) arrives.
type lineReader struct {
	br      *bufio.Reader
	pending chan lineRead // the read in flight, or nil
}

type lineRead struct {
	line string
	err  error
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 4096)}
}

// next returns the next line without its line ending; io.EOF when the
// input ended without one.
func (l *lineReader) next(ctx context.Context) (string, error) {
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

// read reads one line, keeping at most maxAnswerBytes of it.
func (l *lineReader) read() lineRead {
	var line []byte
	for {
		chunk, err := l.br.ReadSlice('\n')
		if len(line) < maxAnswerBytes {
			line = append(line, chunk[:min(len(chunk), maxAnswerBytes-len(line))]...)
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
