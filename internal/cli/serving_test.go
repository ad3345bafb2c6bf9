package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// servingProcess is `mcpbridge serve --http …` running as a child process
// of the test.
type servingProcess struct {
	url        string // the MCP endpoint, from the serving line
	metricsURL string // --metrics-addr's /metrics, when given
	pid        int
	signal     func(syscall.Signal) error
	exited     chan error
	stderr     *lockedBuffer // everything it wrote on stderr
}

// servingURL finds the announcement of a listener, as text or as a JSON
// log record (--log-format json).
var servingURL = regexp.MustCompile(`(?:serving (?:MCP|metrics) on |"url":")(http://[^"\s]+)`)

// startServing runs mcpbridge with args and env (added to the test's
// environment) and waits for the line that announces the MCP endpoint.
// It is stopped with SIGTERM at the end of the test if still running.
func startServing(t *testing.T, env []string, args ...string) *servingProcess {
	t.Helper()
	return startServingCmd(t, mcpbridgeCommand(t, args...), env)
}

// startServingCmd is startServing with the command given (measuredCommand's,
// for a test that measures serve's memory).
func startServingCmd(t *testing.T, cmd *exec.Cmd, env []string) *servingProcess {
	t.Helper()
	cmd.Env = append(cmd.Env, env...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &servingProcess{pid: cmd.Process.Pid, exited: make(chan error, 1), stderr: &lockedBuffer{},
		signal: func(s syscall.Signal) error { return cmd.Process.Signal(s) }}
	lines := bufio.NewScanner(pipe)
	for p.url == "" && lines.Scan() {
		p.stderr.Write([]byte(lines.Text() + "\n"))
		m := servingURL.FindStringSubmatch(lines.Text())
		switch {
		case m == nil:
		case strings.HasSuffix(m[1], "/metrics"):
			p.metricsURL = m[1]
		case strings.HasSuffix(m[1], "/mcp"):
			p.url = m[1]
		}
	}
	go func() {
		io.Copy(p.stderr, pipe)
		p.exited <- cmd.Wait()
	}()
	if p.url == "" {
		cmd.Process.Kill()
		t.Fatalf("no serving line: %v\n%s", <-p.exited, p.stderr)
	}
	t.Cleanup(func() {
		if p.signal(syscall.SIGTERM) == nil {
			p.wait(t)
		}
	})
	return p
}

// pause stops the process (SIGSTOP) and returns once every thread of it
// is stopped: the signal is delivered to each thread as it next runs, so
// a thread busy on another core answers for a while after kill returns.
func (p *servingProcess) pause(t *testing.T) {
	t.Helper()
	if err := p.signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	mcptest.Eventually(t, 10*time.Second, func() bool { return allThreadsStopped(t, p.pid) }, "every thread of the stopped replica to stop")
}

// allThreadsStopped reports whether each thread of process pid is in
// state T (stopped), read from /proc.
func allThreadsStopped(t *testing.T, pid int) bool {
	stats, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(stats) == 0 {
		t.Fatalf("the threads of process %d: %v (none found)", pid, err)
	}
	for _, name := range stats {
		stat, err := os.ReadFile(name)
		if err != nil {
			return false // a thread that just ended: look again
		}
		// The state follows the command's closing parenthesis.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 || i+2 >= len(stat) || stat[i+2] != 'T' {
			return false
		}
	}
	return true
}

// base is the server's root URL.
func (p *servingProcess) base() string { return strings.TrimSuffix(p.url, "/mcp") }

// stop sends SIGTERM and fails the test unless the process exits cleanly.
func (p *servingProcess) stop(t *testing.T) {
	t.Helper()
	if err := p.signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.wait(t); err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, p.stderr)
	}
}

// wait returns how the process exited, once it has. A process still
// running after 30 s is sent SIGQUIT, so that its goroutines' stacks
// in the failure say where it hangs, then killed.
func (p *servingProcess) wait(t *testing.T) error {
	select {
	case err := <-p.exited:
		p.exited <- err // for a later wait
		return err
	case <-time.After(30 * time.Second):
		p.signal(syscall.SIGQUIT)
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
			p.signal(syscall.SIGKILL)
		}
		t.Fatalf("serve did not stop within 30 s of the signal that ends it\n%s", p.stderr)
		return nil
	}
}
