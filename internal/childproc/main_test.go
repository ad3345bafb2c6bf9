//go:build linux

package childproc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// helperEnv selects the behaviour of the re-executed test binary. Its name
// survives Env's scrub on purpose.
const helperEnv = "CHILDPROC_HELPER"

// raceEnv and raceFast stop a -race helper from sleeping a second at exit
// (the race runtime's default), which only makes the tests slow.
const (
	raceEnv  = "GORACE"
	raceFast = "atexit_sleep_ms=0"
)

func TestMain(m *testing.M) {
	if behaviour := os.Getenv(helperEnv); behaviour != "" {
		os.Exit(runHelper(behaviour))
	}
	goleak.VerifyTestMain(m)
}

// helperMsg is the payload of the notifications helpers write to stdout.
type helperMsg struct {
	PID  int      `json:"pid,omitempty"`
	Env  []string `json:"env,omitempty"`
	Args []string `json:"args,omitempty"`
	Cwd  string   `json:"cwd,omitempty"`
	Blob string   `json:"blob,omitempty"`
}

// notify writes one JSON-RPC notification to stdout, the MCP channel.
func notify(method string, msg helperMsg) {
	data, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": msg})
	if err != nil {
		panic(err)
	}
	if _, err := os.Stdout.Write(append(data, '\n')); err != nil {
		panic(err)
	}
}

// awaitEOF returns once the parent has closed our stdin.
func awaitEOF() { _, _ = io.Copy(io.Discard, os.Stdin) }

// startGrandchild starts a long-sleeping copy of the test binary that
// inherits our stdout and stderr, as npx or sh -c children do.
func startGrandchild(ownSession bool) int {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), helperEnv+"=sleep")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if ownSession {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	return cmd.Process.Pid
}

// reportTerm says on stderr when stdin ends and when SIGTERM comes, so a
// test sees the ladder's steps from the child's side. With a cleanup, it
// exits that long after stdin EOF (status 1 if SIGTERM interrupts it);
// without, it ignores EOF and exits 0 on SIGTERM.
func reportTerm(cleanup time.Duration) int {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	notify("ready", helperMsg{})
	awaitEOF()
	fmt.Fprintln(os.Stderr, "stdin ended")
	var cleaned <-chan time.Time // nil: never
	if cleanup > 0 {
		cleaned = time.After(cleanup)
	}
	select {
	case <-term:
		fmt.Fprintln(os.Stderr, "got SIGTERM")
		if cleanup > 0 {
			return 1
		}
		return 0
	case <-cleaned:
		fmt.Fprintln(os.Stderr, "cleaned up")
		return 0
	}
}

// runHelper is the child side of the tests; it returns the exit status.
func runHelper(behaviour string) int {
	switch behaviour {
	case "mcp":
		type in struct {
			Name string `json:"name"`
		}
		type out struct {
			Greeting string `json:"greeting"`
		}
		server := mcp.NewServer(&mcp.Implementation{Name: "helper", Version: "0.0.1"}, nil)
		mcp.AddTool(server, &mcp.Tool{Name: "greet", Description: "greets"},
			func(_ context.Context, _ *mcp.CallToolRequest, arg in) (*mcp.CallToolResult, out, error) {
				return nil, out{Greeting: "hello " + arg.Name}, nil
			})
		if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "server:", err)
			return 1
		}
		return 0
	case "print-env":
		cwd, _ := os.Getwd()
		notify("env", helperMsg{Env: os.Environ(), Args: os.Args[1:], Cwd: cwd})
		awaitEOF()
		return 0
	case "idle":
		notify("ready", helperMsg{PID: os.Getpid()})
		awaitEOF()
		return 0
	case "exit3-on-eof":
		notify("ready", helperMsg{})
		awaitEOF()
		return 3
	case "self-term":
		notify("ready", helperMsg{})
		awaitEOF()
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
		time.Sleep(time.Hour) // the signal ends us first
		return 0
	case "ignore-eof":
		notify("ready", helperMsg{})
		awaitEOF()
		time.Sleep(time.Hour) // SIGTERM ends us first
		return 0
	case "report-term":
		return reportTerm(0)
	case "cleanup-on-eof":
		return reportTerm(100 * time.Millisecond)
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		notify("ready", helperMsg{})
		awaitEOF()
		time.Sleep(time.Hour) // SIGKILL ends us first
		return 0
	case "fork-grandchild":
		notify("ready", helperMsg{PID: startGrandchild(false)})
		awaitEOF()
		return 0 // the grandchild is left behind on purpose
	case "exit7":
		notify("ready", helperMsg{PID: startGrandchild(false)})
		return 7
	case "escape":
		notify("ready", helperMsg{PID: startGrandchild(true)})
		awaitEOF()
		return 0
	case "sleep":
		time.Sleep(5 * time.Minute) // killed by the test long before
		return 0
	case "stderr":
		fmt.Fprint(os.Stderr, "first\nsecond\r\n\nthird\n")
		fmt.Fprint(os.Stderr, strings.Repeat("x", MaxStderrLine)+"\n")
		fmt.Fprint(os.Stderr, strings.Repeat("y", 2*MaxStderrLine+10)+"\n")
		fmt.Fprint(os.Stderr, "\x1b]0;pwned\x07title\tx\x1b[2J\rover\u009b\xff\n") // window title, clear screen, CR, C1, bad UTF-8
		fmt.Fprint(os.Stderr, "last, without newline")
		return 0
	case "stderr-handshake":
		fmt.Fprint(os.Stderr, "a\n")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // the parent's go-ahead
		fmt.Fprint(os.Stderr, "b\n")
		fmt.Fprint(os.Stderr, "c\n")
		return 0
	case "big-line":
		notify("big", helperMsg{Blob: strings.Repeat("b", 4096)})
		awaitEOF()
		return 0
	case "spawner":
		// Starts its own child through Transport and waits to be killed, so
		// the test can check Pdeathsig.
		exe, err := os.Executable()
		if err != nil {
			panic(err)
		}
		tr := &Transport{Command: exe, Env: Env(os.Environ(), map[string]string{helperEnv: "ignore-term", raceEnv: raceFast})}
		conn, err := tr.Connect(context.Background())
		if err != nil {
			panic(err)
		}
		if _, err := conn.Read(context.Background()); err != nil {
			panic(err)
		}
		notify("ready", helperMsg{PID: tr.Process().PID()})
		time.Sleep(time.Hour) // the test SIGKILLs us
		return 0
	default:
		fmt.Fprintf(os.Stderr, "unknown %s %q\n", helperEnv, behaviour)
		return 2
	}
}
