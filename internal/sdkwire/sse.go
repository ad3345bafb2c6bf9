package sdkwire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// sseFilter rewrites captured responses inside a server-sent event stream,
// passing every other byte through unchanged and event by event (streams are
// long-lived; nothing may wait for the end of the body).
type sseFilter struct {
	src   io.ReadCloser
	r     *bufio.Reader
	table *Table
	call  *Slot  // the call whose response stream this is; nil for others
	max   int    // largest event held; 0 = no limit
	event []byte // lines of the event being read
	out   []byte // bytes ready for the reader
	err   error
}

func newSSEFilter(body io.ReadCloser, t *Table, max int, call *Slot) *sseFilter {
	return &sseFilter{src: body, r: bufio.NewReaderSize(body, 64<<10), table: t, max: max, call: call}
}

func (f *sseFilter) Read(p []byte) (int, error) {
	for len(f.out) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		f.readLine()
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	return n, nil
}

// readLine reads one line (or the part of a long one the buffer holds) into
// the event being read, and moves a complete event to out.
func (f *sseFilter) readLine() {
	line, err := f.r.ReadSlice('\n')
	if f.max > 0 && len(f.event)+len(line) > f.max {
		f.err = fmt.Errorf("a server-sent event exceeds the frame limit of %d bytes", f.max)
		f.event = nil
		return
	}
	f.event = append(f.event, line...)
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		// A long data line: keep accumulating it.
	case err != nil:
		f.err = err
		f.out, f.event = f.event, nil
	case len(bytes.TrimRight(line, "\r\n")) == 0 && endsWithLine(f.event, line):
		f.out = f.rewrite(f.event)
		f.event = nil
	}
}

// endsWithLine reports whether line started at a line boundary of event, that
// is, the blank line terminates an event rather than ending a long line.
func endsWithLine(event, line []byte) bool {
	rest := event[:len(event)-len(line)]
	return len(rest) == 0 || rest[len(rest)-1] == '\n'
}

// rewrite returns event, with its data replaced when it is a captured
// response, and left out when the table consumes it (its id stays: the SDK
// skips an event without data but resumes after its id).
func (f *sseFilter) rewrite(event []byte) []byte {
	var data []byte
	var other [][]byte
	for _, line := range bytes.SplitAfter(event, []byte("\n")) {
		trimmed := bytes.TrimRight(line, "\r\n")
		if v, ok := bytes.CutPrefix(trimmed, []byte("data:")); ok {
			v = bytes.TrimPrefix(v, []byte(" "))
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, v...)
			continue
		}
		if len(trimmed) > 0 {
			other = append(other, line)
		}
	}
	if data == nil {
		return event
	}
	replaced, consumed := filterMessage(f.table, data, f.call)
	if !consumed && bytes.Equal(replaced, data) {
		return event
	}
	var b bytes.Buffer
	for _, line := range other {
		b.Write(line)
	}
	if !consumed {
		b.WriteString("data: ")
		b.Write(replaced)
		b.WriteString("\n")
	}
	b.WriteString("\n")
	return b.Bytes()
}

func (f *sseFilter) Close() error { return f.src.Close() }
