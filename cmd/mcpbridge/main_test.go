package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// runMainEnv makes the re-executed test binary run main: the command as a
// person starts it, its stdin, stdout and stderr a pseudo-terminal.
const runMainEnv = "PTYTEST_RUN_MAIN"

func TestMain(m *testing.M) {
	mcppeer.RunIfChild() // the asker server the command starts
	if os.Getenv(runMainEnv) == "1" {
		main()
	}
	mcptest.VerifyTestMain(m)
}

// console is a command running in a pseudo-terminal, read as a person
// sees it and typed into.
type console struct {
	t    *testing.T
	tty  *os.File
	cmd  *exec.Cmd
	mu   sync.Mutex
	seen bytes.Buffer // everything shown so far
	read int          // how much of seen expect has consumed
	more chan struct{}
	done chan struct{} // closed when the terminal has no more output
}

// startConsole runs mcpbridge args on a new pseudo-terminal.
func startConsole(t *testing.T, args ...string) *console {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 200})
	if err != nil {
		t.Fatalf("starting in a pseudo-terminal: %v", err)
	}
	c := &console{t: t, tty: tty, cmd: cmd, more: make(chan struct{}, 1), done: make(chan struct{})}
	go c.copy()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // a no-op once waited for
		<-c.done
		tty.Close()
	})
	return c
}

func (c *console) copy() {
	defer close(c.done)
	buf := make([]byte, 4096)
	for {
		n, err := c.tty.Read(buf)
		c.mu.Lock()
		c.seen.Write(buf[:n])
		c.mu.Unlock()
		select {
		case c.more <- struct{}{}:
		default:
		}
		if err != nil { // EIO once the command and its children are gone
			return
		}
	}
}

// deadline bounds each wait only so that a broken prompt fails the test
// instead of hanging it; nothing is timed.
const deadline = 60 * time.Second

// expect waits until the terminal shows s after what earlier expects
// consumed.
func (c *console) expect(s string) {
	c.t.Helper()
	timeout := time.After(deadline)
	for {
		c.mu.Lock()
		rest := c.seen.String()[c.read:]
		if i := strings.Index(rest, s); i >= 0 {
			c.read += i + len(s)
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		select {
		case <-c.more:
		case <-c.done:
			c.mu.Lock()
			found := strings.Contains(c.seen.String()[c.read:], s)
			c.mu.Unlock()
			if !found {
				c.t.Fatalf("the terminal closed without showing %q; it showed:\n%s", s, c.shown())
			}
		case <-timeout:
			c.t.Fatalf("the terminal did not show %q; it showed:\n%s", s, c.shown())
		}
	}
}

func (c *console) shown() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen.String()
}

// typeLine types s and Enter, as keys.
func (c *console) typeLine(s string) {
	c.t.Helper()
	if _, err := c.tty.WriteString(s + "\r"); err != nil {
		c.t.Fatal(err)
	}
}

// exit waits for the command and returns its exit status.
func (c *console) exit() int {
	c.t.Helper()
	err := c.cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	c.t.Fatal(err)
	return -1
}

// askerConfig is a config with the asker server (this test binary).
func askerConfig(t *testing.T) string { return childConfig(t, "asker", "asker", "") }

// childConfig is a config with one server, serverName server: this test
// binary as a child of kind (see mcppeer.ChildEnv) with childEnv, and
// the config keys in extra (indented lines).
func childConfig(t *testing.T, kind, server, extra string, childEnv ...string) string {
	cmd, args, env := mcptest.ChildCommand(t, kind, childEnv...)
	var envLines strings.Builder
	for k, v := range env {
		fmt.Fprintf(&envLines, "      %s: %q\n", k, v)
	}
	path := filepath.Join(t.TempDir(), "mcpbridge.yaml")
	cfg := fmt.Sprintf(`- id: %[1]s
  name: mcp-client
  config:
    serverName: %[1]s
    transport: stdio
    command: %[2]q
    args: [%[3]q]
    protocolVersion: "2025-11-25"
%[4]s    env:
%[5]s`, server, cmd, args[0], extra, envLines.String())
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A tool that elicits, called on a terminal: the person answers the form
// with typed keys (string, number, choice, boolean, choices), declines it,
// or cancels it; a URL elicitation waits for Enter.
func TestTerminalElicitation(t *testing.T) {
	cfg := askerConfig(t)
	// The fields come in the order the server wrote them.
	fill := func(c *console) {
		c.expect(`Server "asker" asks: What would you like?`)
		c.expect("Name (required): who the order is for")
		c.expect("text: ")
		c.typeLine("A")
		c.expect("not accepted")
		c.typeLine("Ada Lovelace")
		c.expect("a whole number [1]: ")
		c.typeLine("11")
		c.expect("not accepted")
		c.typeLine("3")
		c.expect("3) Large")
		c.expect("1-3 [Medium]: ")
		c.typeLine("3")
		c.expect("y/n [n]: ")
		c.typeLine("y")
		c.expect("3) basil")
		c.expect("some of 1-3, comma-separated: ")
		c.typeLine("1,3")
	}
	for _, tc := range []struct {
		name   string
		answer func(c *console)
		want   string
	}{
		{"accepted", func(c *console) {
			fill(c)
			c.expect("Send these answers?")
			c.typeLine("")
		}, `accept {"extras":["cheese","basil"],"gift":true,"name":"Ada Lovelace","quantity":3,"size":"l"}`},
		{"declined", func(c *console) {
			fill(c)
			c.expect("Send these answers?")
			c.typeLine("n")
		}, "\r\ndecline\r\n"},
		{"cancelled", func(c *console) {
			c.expect("text: ")
			c.typeLine("Ada")
			c.expect("a whole number [1]: ")
			c.typeLine(":cancel")
		}, "\r\ncancel\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startConsole(t, "call", "--config", cfg, "mcp__asker__order", "{}")
			tc.answer(c)
			c.expect(tc.want)
			if code := c.exit(); code != 0 {
				t.Errorf("exit %d; the terminal showed:\n%s", code, c.shown())
			}
		})
	}
	t.Run("url", func(t *testing.T) {
		c := startConsole(t, "call", "--config", cfg, "mcp__asker__consent", "{}")
		c.expect(`Server "asker" asks you to open a URL: Please agree to the terms.`)
		c.expect("https://example.com/consent?x=1")
		c.expect("Press Enter once done there")
		c.typeLine("")
		c.expect("\r\naccept\r\n")
		if code := c.exit(); code != 0 {
			t.Errorf("exit %d; the terminal showed:\n%s", code, c.shown())
		}
	})
}

// The TypeScript reference server's form, every SEP-1330 shape in it,
// answered on a terminal: a name typed, every other field left at its
// default with Enter.
func TestTerminalElicitationServerEverything(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcpbridge.yaml")
	cfg := fmt.Sprintf("- id: everything\n  name: mcp-client\n  config:\n    serverName: everything\n    transport: stdio\n    command: %q\n    args: [stdio]\n",
		mcptest.ThirdPartyBin(t, "mcp-server-everything"))
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	c := startConsole(t, "call", "--config", path, "mcp__everything__trigger-elicitation-request", "{}")
	c.expect("Please provide inputs for the following fields:")
	c.expect("String (required): Your full, legal name")
	c.expect("text: ")
	c.typeLine("Ada")
	for _, field := range []string{"y/n: ", "text [It was a dark and stormy night.]: ", "text: ", "text: ", "text: ",
		"a whole number [42]: ", "a number [3.14]: ", "6) Phoebe", "1-6 [Monica]: ", "some of 1-5, comma-separated [Guitar]: ",
		"3) Wonder Woman", "1-3 [Superman]: ", "3) Trout", "some of 1-3, comma-separated [Tuna]: ", "5) Reptiles", "1-5 [Cats]: "} {
		c.expect(field)
		if strings.HasSuffix(field, ": ") {
			c.typeLine("")
		}
	}
	c.expect("Send these answers?")
	c.typeLine("y")
	c.expect("User provided the requested information!")
	c.expect("- Name: Ada")
	c.expect("- Favorite Integer: 42")
	if code := c.exit(); code != 0 {
		t.Errorf("exit %d; the terminal showed:\n%s", code, c.shown())
	}
}
