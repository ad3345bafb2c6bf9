package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// rootsGateEnv makes the re-executed test binary a stdio relay in front of
// the server its arguments name (server-filesystem): it holds every
// tools/call until the server has settled the roots it was offered. A
// server applies its roots after the handshake, on its own time, so without
// the relay a single `mcpbridge call` may run before they apply, and pass
// whatever the bridge offered.
const rootsGateEnv = "CLITEST_ROOTS_GATE"

// rootsSettled are the lines server-filesystem prints on stderr once it has
// dealt with its client's roots, whichever way.
var rootsSettled = []string{
	widened,
	"No valid root directories provided by client",
	"Client returned no roots set",
	"Client does not support MCP Roots",
	"Failed to request initial roots",
}

// rootsGateWait bounds the hold, so that a server that never settles fails
// the test on its assertions rather than hanging it.
const rootsGateWait = 30 * time.Second

// runRootsGate relays stdin and stdout between its caller and the server
// of args, and the server's stderr to its own; it returns the server's exit
// status.
func runRootsGate(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "roots gate: no server command")
		return 2
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout = os.Stdout
	in, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "roots gate:", err)
		return 1
	}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "roots gate:", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "roots gate:", err)
		return 1
	}
	settled := make(chan struct{})
	var relayed sync.WaitGroup
	relayed.Go(func() { watchSettled(errPipe, settled) })
	holdCalls(os.Stdin, in, settled)
	in.Close()
	relayed.Wait()
	if err := cmd.Wait(); err != nil {
		return 1
	}
	return 0
}

// watchSettled copies the server's stderr to ours and closes settled at the
// first line in rootsSettled.
func watchSettled(r io.Reader, settled chan<- struct{}) {
	sc := bufio.NewScanner(r)
	once := sync.OnceFunc(func() { close(settled) })
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(os.Stderr, line)
		for _, s := range rootsSettled {
			if strings.Contains(line, s) {
				once()
			}
		}
	}
}

// holdCalls copies newline-delimited messages from r to w, each tools/call
// only once settled is closed (or rootsGateWait has passed).
func holdCalls(r io.Reader, w io.Writer, settled <-chan struct{}) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var msg struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) == nil && msg.Method == "tools/call" {
			select {
			case <-settled:
			case <-time.After(rootsGateWait):
				fmt.Fprintln(os.Stderr, "roots gate: the server never settled its roots")
			}
		}
		if _, err := w.Write(append(sc.Bytes(), '\n')); err != nil {
			return
		}
	}
}
