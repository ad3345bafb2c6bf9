package termio

import (
	"fmt"
	"io"
	"os"
	"sync"
	"unicode/utf8"

	"golang.org/x/term"
)

// Console is the person's line editor: golang.org/x/term's Terminal
// (history, editing keys) in raw mode only while a line is read, so that
// between lines the terminal is as usual (Ctrl-C interrupts, and an
// elicitation reads plain lines from the same stdin). docs/decisions.md
// says why this one.
type Console struct {
	mu  sync.Mutex
	fd  int // -1 when stdin is no file (no raw mode)
	in  io.Reader
	out io.Writer
	t   *term.Terminal
}

// NewConsole reads from in and echoes to out; raw mode only when in is a
// terminal. onKey, when not nil, is given the keys the line editor does
// not know, with the line being typed and the cursor's position; it
// returns the new line and position, and ok true when it took the key
// (golang.org/x/term's AutoCompleteCallback).
func NewConsole(in io.Reader, out io.Writer, onKey func(line string, pos int, key rune) (newLine string, newPos int, ok bool)) *Console {
	c := &Console{fd: -1, in: in, out: out, t: term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{in, out}, "")}
	c.t.AutoCompleteCallback = onKey
	if f, ok := in.(*os.File); ok {
		c.fd = int(f.Fd())
	}
	return c
}

// ReadKey writes prompt and reads one key press, in raw mode so that the
// key alone answers (no Enter); it returns the key as a string (Ctrl-C
// and Ctrl-D too: raw mode makes them keys). What was typed before the
// prompt is discarded, never taken for the answer. Escape sequences
// (arrow keys) and Enter are skipped. A stdin that is no terminal has no
// keys: a line is read and returned instead.
func (c *Console) ReadKey(prompt string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd < 0 || !term.IsTerminal(c.fd) {
		c.t.SetPrompt(prompt)
		return c.t.ReadLine()
	}
	old, err := term.MakeRaw(c.fd)
	if err != nil {
		return "", fmt.Errorf("reading a key: %w", err)
	}
	defer term.Restore(c.fd, old)
	// Typed-ahead keys are discarded before the prompt shows, never after:
	// a key pressed once the person saw the question is the answer.
	flushInput(c.fd) // best effort: where it fails, a typed-ahead key is read
	fmt.Fprint(c.out, prompt)
	buf := make([]byte, 64)
	for {
		n, err := c.in.Read(buf)
		if err != nil {
			return "", err
		}
		if key, ok := pressedKey(buf[:n]); ok {
			return key, nil
		}
	}
}

// pressedKey is the key a read from a raw terminal holds: its first
// character; ok false for what answers nothing (Enter, an escape
// sequence, nothing); io.EOF's keys (Ctrl-C, Ctrl-D) come back as "\x03"
// and "\x04" for the caller to tell.
func pressedKey(b []byte) (string, bool) {
	if len(b) == 0 || b[0] == '\r' || b[0] == '\n' || b[0] == 0x1b {
		return "", false
	}
	r, _ := utf8.DecodeRune(b)
	return string(r), true
}

// ReadLine reads one line after prompt; io.EOF on Ctrl-D or Ctrl-C.
func (c *Console) ReadLine(prompt string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd >= 0 {
		if old, err := term.MakeRaw(c.fd); err == nil {
			defer term.Restore(c.fd, old)
		}
	}
	c.t.SetPrompt(prompt)
	return c.t.ReadLine()
}

// Write writes p above the line being typed, which is drawn again below
// it; safe to call from onKey, while ReadLine waits.
func (c *Console) Write(p []byte) (int, error) { return c.t.Write(p) }
