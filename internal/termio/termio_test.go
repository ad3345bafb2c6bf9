package termio

import (
	"context"
	"io"
	"strings"
	"testing"
)

// A raw terminal's read answers with its first character; Enter and an
// escape sequence (an arrow key) answer nothing.
func TestPressedKey(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
		ok   bool
	}{{"y", "y", true}, {"tx", "t", true}, {"é", "é", true}, {"\x03", "\x03", true}, {"\r", "", false}, {"\x1b[A", "", false}, {"", "", false}} {
		if got, ok := pressedKey([]byte(c.in)); got != c.want || ok != c.ok {
			t.Errorf("pressedKey(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// A line longer than the bound is cut, not buffered whole.
func TestLineReaderBound(t *testing.T) {
	long := strings.Repeat("x", MaxLine+5000)
	l := NewLineReader(strings.NewReader(long + "\r\nnext"))
	first, err := l.Next(context.Background())
	if err != nil || len(first) != MaxLine {
		t.Errorf("long line: %d bytes, %v", len(first), err)
	}
	if second, err := l.Next(context.Background()); second != "next" || err != nil {
		t.Errorf("after it: %q, %v", second, err)
	}
	if _, err := l.Next(context.Background()); err != io.EOF {
		t.Errorf("at the end: %v", err)
	}
}
