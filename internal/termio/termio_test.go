package termio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
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

// Interrupt ends a ReadLine waiting at a terminal for a key, and a
// ReadKey too; each Interrupt ends one read (one pending ends the next
// read at once), and the read after it reads the key typed.
func TestInterruptEndsARead(t *testing.T) {
	ptmx, c, shown := onTerminal(t)

	read := make(chan error, 1)
	go func() {
		_, err := c.ReadLine("> ")
		read <- err
	}()
	waitShown(t, shown, "> ") // written just before the read waits
	c.Interrupt()
	if err := within(t, read); !errors.Is(err, ErrInterrupted) {
		t.Errorf("ReadLine after Interrupt: %v, want ErrInterrupted", err)
	}

	c.Interrupt()
	if _, err := c.ReadKey(t.Context(), "? "); !errors.Is(err, ErrInterrupted) {
		t.Errorf("ReadKey with an Interrupt pending: %v, want ErrInterrupted", err)
	}

	waitShown(t, shown, "? ")

	go func() {
		key, err := c.ReadKey(t.Context(), "? ")
		if key != "y" {
			err = fmt.Errorf("read %q, %v", key, err)
		}
		read <- err
	}()
	waitShown(t, shown, "? ") // typed-ahead keys are flushed before it
	io.WriteString(ptmx, "y")
	if err := within(t, read); err != nil {
		t.Errorf("the read after the Interrupts: %v", err)
	}
}

// The end of its context ends a ReadKey waiting at a terminal (a
// Ctrl-C that cancelled the turn just before the question went raw), and
// leaves nothing behind: the next read waits for its key. A ReadKey used
// to wait for a key whatever happened to the turn it asked for.
func TestReadKeyEndsWithItsContext(t *testing.T) {
	ptmx, c, shown := onTerminal(t)

	ctx, cancel := context.WithCancel(t.Context())
	read := make(chan error, 1)
	go func() {
		_, err := c.ReadKey(ctx, "? ")
		read <- err
	}()
	waitShown(t, shown, "? ")
	cancel()
	if err := within(t, read); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadKey after its context ended: %v, want context.Canceled", err)
	}
	if _, err := c.ReadKey(ctx, "? "); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadKey with its context ended: %v, want context.Canceled", err)
	}

	go func() {
		key, err := c.ReadKey(t.Context(), "! ")
		if key != "n" {
			err = fmt.Errorf("read %q, %v", key, err)
		}
		read <- err
	}()
	waitShown(t, shown, "! ")
	io.WriteString(ptmx, "n")
	if err := within(t, read); err != nil {
		t.Errorf("the read after a cancelled one: %v", err)
	}
}

// onTerminal is a Console on a pseudo-terminal: its master, which the
// test types on, and what the console writes, read by the test.
func onTerminal(t *testing.T) (*os.File, *Console, <-chan string) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	shown := make(chan string, 16)
	go func() {
		defer close(shown)
		buf := make([]byte, 256)
		for {
			n, err := ptmx.Read(buf)
			if err != nil {
				return
			}
			shown <- string(buf[:n])
		}
	}()
	c := NewConsole(tty, tty, nil)
	t.Cleanup(func() {
		c.Close()
		tty.Close()
		ptmx.Close()
	})
	return ptmx, c, shown
}

// waitShown waits until the terminal shows want.
func waitShown(t *testing.T, shown <-chan string, want string) {
	t.Helper()
	var all strings.Builder
	timeout := time.After(10 * time.Second)
	for !strings.Contains(all.String(), want) {
		select {
		case s := <-shown:
			all.WriteString(s)
		case <-timeout:
			t.Fatalf("the terminal did not show %q: %q", want, all.String())
		}
	}
}

// within returns what a read sent on done, failing the test when it
// did not end.
func within(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the read did not end")
		return nil
	}
}
