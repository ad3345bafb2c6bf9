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
	"os"

	"golang.org/x/term"
)

// MaxLine bounds one line a person types: a longer line is cut.
const MaxLine = 64 << 10

// LineReader reads a person's answers from stdin one line at a time,
// giving up when the waiting context ends (an interrupt while a form is
// asked must not hang). One read is in flight at most. At a terminal a
// read the context abandoned is stopped, and what was read for it
// dropped: a line typed for a question that is gone answers nothing, and
// no read is left to take the next question's keys (the agent's approval
// reads the same terminal). Elsewhere a read cannot be stopped: the
// abandoned one is the next answer, and its goroutine ends when the line
// (or the end of input) arrives.
type LineReader struct {
	in        io.Reader
	fd        int // the terminal in is, else -1
	br        *bufio.Reader
	pending   chan lineRead // the read in flight, or nil
	wake      wakePipe      // stops the read in flight, at a terminal
	abandoned bool          // the read in flight was stopped: it answers nothing
}

type lineRead struct {
	line string
	err  error
}

// NewLineReader reads lines of r.
func NewLineReader(r io.Reader) *LineReader {
	l := &LineReader{in: r, fd: -1, wake: closedPipe}
	if f, ok := r.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		l.fd = int(f.Fd())
	}
	l.br = bufio.NewReaderSize(readerFunc(func(p []byte) (int, error) { return l.wake.read(l.fd, l.in, p) }), 4096)
	return l
}

// Next returns the next line without its line ending; io.EOF when the
// input ended without one.
func (l *LineReader) Next(ctx context.Context) (string, error) {
	if err := l.settle(ctx); err != nil {
		return "", err
	}
	if l.pending == nil {
		if l.fd >= 0 {
			l.wake = newWakePipe() // one a read: none is left raised for the next
		}
		ch := make(chan lineRead, 1)
		l.pending = ch
		go func() { ch <- l.read() }()
	}
	select {
	case r := <-l.pending:
		l.readEnded()
		return r.line, r.err
	case <-ctx.Done():
		if l.wake != closedPipe {
			// It stops at once, unless another read of the terminal took
			// what it waited for: not waited for here, so as not to hang.
			l.wake.raise()
			l.abandoned = true
		}
		return "", ctx.Err()
	}
}

// settle waits until a read abandoned has stopped, and drops what it read
// and the lines read ahead with it: they were typed for the question
// that is gone.
func (l *LineReader) settle(ctx context.Context) error {
	if !l.abandoned {
		return nil
	}
	select {
	case <-l.pending:
	case <-ctx.Done():
		return ctx.Err()
	}
	l.readEnded()
	l.br.Discard(l.br.Buffered())
	return nil
}

// readEnded forgets the read that ended.
func (l *LineReader) readEnded() {
	l.pending, l.abandoned = nil, false
	l.wake.close()
	l.wake = closedPipe
}

// DropTypedAhead drops what was typed before a question shows, so that
// only what the person typed for it answers it: the lines read ahead
// and, at a terminal, what waits unread. A read in flight that could not
// be stopped (no terminal) is left as it is. It fails only when ctx ends
// while a read abandoned stops.
func (l *LineReader) DropTypedAhead(ctx context.Context) error {
	if err := l.settle(ctx); err != nil || l.pending != nil {
		return err
	}
	l.br.Discard(l.br.Buffered())
	if l.fd >= 0 {
		flushInput(l.fd) // best effort, as before a key is read
	}
	return nil
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
