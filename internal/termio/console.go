package termio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"unicode/utf8"

	"golang.org/x/term"
)

// ErrInterrupted is what ReadLine and ReadKey return when Interrupt
// ended their wait.
var ErrInterrupted = errors.New("interrupted")

// Console is the person's line editor: golang.org/x/term's Terminal
// (history, editing keys) in raw mode only while a line is read, so that
// between lines the terminal is as usual (Ctrl-C interrupts, and an
// elicitation reads plain lines from the same stdin). docs/decisions.md
// says why this one.
type Console struct {
	mu   sync.Mutex
	fd   int // -1 when stdin is no file (no raw mode)
	in   io.Reader
	out  io.Writer
	t    *term.Terminal
	wake wakePipe // Interrupt's; closed when in is no terminal
}

// NewConsole reads from in and echoes to out; raw mode only when in is a
// terminal. onKey, when not nil, is given the keys the line editor does
// not know, with the line being typed and the cursor's position; it
// returns the new line and position, and ok true when it took the key
// (golang.org/x/term's AutoCompleteCallback).
func NewConsole(in io.Reader, out io.Writer, onKey func(line string, pos int, key rune) (newLine string, newPos int, ok bool)) *Console {
	c := &Console{fd: -1, in: in, out: out, wake: closedPipe}
	c.t = term.NewTerminal(struct {
		io.Reader
		io.Writer
	}{readerFunc(c.read), out}, "")
	c.t.AutoCompleteCallback = onKey
	if f, ok := in.(*os.File); ok {
		c.fd = int(f.Fd())
		if term.IsTerminal(c.fd) {
			c.wake = newWakePipe()
		}
	}
	return c
}

// Interrupt ends the wait of the ReadLine or ReadKey reading now, or of
// the next one when none is: it returns ErrInterrupted. It is for a
// signal that comes while the terminal is raw (a Ctrl-C pressed just
// before it went raw), which would otherwise leave the read waiting for
// a key. It does nothing when in is no terminal.
func (c *Console) Interrupt() { c.wake.raise() }

// Close releases what Interrupt needs; the Console is not used after.
func (c *Console) Close() { c.wake.close() }

// read reads in once it has something to read, or returns ErrInterrupted
// once Interrupt was called (each call ends one read).
func (c *Console) read(p []byte) (int, error) { return c.wake.read(c.fd, c.in, p) }

// wakePipe is a pipe whose read end a terminal read polls beside the
// terminal, so that another goroutine can end that read (wake.go).
type wakePipe struct{ r, w int }

// read reads in, the terminal fd, once it has something to read, or
// returns ErrInterrupted once w is raised (each raise ends one read); with
// closedPipe it reads at once.
func (w wakePipe) read(fd int, in io.Reader, p []byte) (int, error) {
	if w == closedPipe {
		return in.Read(p)
	}
	interrupted, err := w.waitFor(fd)
	if err != nil {
		return 0, fmt.Errorf("waiting for the terminal: %w", err)
	}
	if interrupted {
		return 0, ErrInterrupted
	}
	return in.Read(p)
}

// closedPipe stands for no pipe: raise does nothing.
var closedPipe = wakePipe{-1, -1}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// ReadKey writes prompt and reads one key press, in raw mode so that the
// key alone answers (no Enter); it returns the key as a string (Ctrl-C
// and Ctrl-D too: raw mode makes them keys). What was typed before the
// prompt is discarded, never taken for the answer. Escape sequences
// (arrow keys) and Enter are skipped. A stdin that is no terminal has no
// keys: a line is read and returned instead. The end of ctx ends the wait
// at a terminal (ErrInterrupted): a Ctrl-C that cancelled ctx just before
// the terminal went raw would otherwise leave the question waiting.
func (c *Console) ReadKey(ctx context.Context, prompt string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if c.fd < 0 || !term.IsTerminal(c.fd) {
		c.t.SetPrompt(prompt)
		return c.t.ReadLine()
	}
	old, err := term.MakeRaw(c.fd)
	if err != nil {
		return "", fmt.Errorf("reading a key: %w", err)
	}
	defer term.Restore(c.fd, old)
	key, err := c.readKey(ctx, prompt)
	if err != nil && ctx.Err() != nil {
		return "", ctx.Err()
	}
	return key, err
}

// readKey is ReadKey's wait at a raw terminal, which ctx's end interrupts.
func (c *Console) readKey(ctx context.Context, prompt string) (key string, err error) {
	raised := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		c.wake.raise()
		close(raised)
	})
	defer func() {
		if !stop() && !errors.Is(err, ErrInterrupted) {
			<-raised
			c.wake.take() // raised as the key came: it must not end the next read
		}
	}()
	// Typed-ahead keys are discarded before the prompt shows, never after:
	// a key pressed once the person saw the question is the answer.
	flushInput(c.fd) // best effort: where it fails, a typed-ahead key is read
	fmt.Fprint(c.out, prompt)
	buf := make([]byte, 64)
	for {
		n, err := c.read(buf)
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

// ReadLine reads one line after prompt; io.EOF on Ctrl-D or Ctrl-C,
// ErrInterrupted after Interrupt.
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
