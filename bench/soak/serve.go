package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// program is how to run mcpbridge: a path and an environment overlay.
type program struct {
	path string
	env  []string
}

// mcpbridgeProgram resolves -mcpbridge: "" builds ./cmd/mcpbridge into dir,
// "self" is this program (see selfEnv), anything else a path.
func mcpbridgeProgram(spec, dir string) (program, error) {
	switch spec {
	case "self":
		exe, err := os.Executable()
		return program{path: exe, env: []string{selfEnv + "=1"}}, err
	case "":
		out := filepath.Join(dir, "mcpbridge")
		cmd := exec.Command("go", "build", "-o", out, "github.com/mcpbridge/mcpbridge/cmd/mcpbridge")
		if b, err := cmd.CombinedOutput(); err != nil {
			return program{}, fmt.Errorf("building mcpbridge (run from the module, with go on PATH): %w: %s", err, bytes.TrimSpace(b))
		}
		return program{path: out}, nil
	default:
		return program{path: spec}, nil
	}
}

// serveProc is a running `mcpbridge serve --http`.
type serveProc struct {
	cmd        *exec.Cmd
	token      string
	mcpURL     string
	metricsURL string
	log        *serveLog
	exited     chan struct{} // closed when cmd.Wait returned
	waitErr    error         // set before exited is closed
}

// serveLog keeps what serve writes on stderr: a bounded tail, and counts
// of the lines the soak follows.
type serveLog struct {
	mu       sync.Mutex
	tail     []string // the last tailLines lines; guarded by mu
	reloads  int      // "config file changed, reloading"; guarded by mu
	applied  int      // "applied"; guarded by mu
	warnings int      // level=WARN or ERROR; guarded by mu
}

const tailLines = 40

func (l *serveLog) add(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tail = append(l.tail, line); len(l.tail) > tailLines {
		l.tail = l.tail[1:]
	}
	switch {
	case strings.Contains(line, `msg="config file changed, reloading"`):
		l.reloads++
	case strings.Contains(line, "msg=applied"):
		l.applied++
	}
	if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
		l.warnings++
	}
}

func (l *serveLog) counts() (reloads, applied, warnings int, tail string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reloads, l.applied, l.warnings, strings.Join(l.tail, "\n")
}

var servingURL = regexp.MustCompile(`serving (?:MCP|metrics) on (http://\S+)`)

// startServe starts serve on free loopback ports with a fresh token, and
// waits for it to announce both listeners.
func startServe(ctx context.Context, prog program, config string) (*serveProc, error) {
	tok := make([]byte, 16)
	rand.Read(tok)
	p := &serveProc{token: hex.EncodeToString(tok), log: &serveLog{}, exited: make(chan struct{})}
	p.cmd = exec.Command(prog.path, "serve", "--config", config, "--http", "127.0.0.1:0",
		"--token-env", "SOAK_TOKEN", "--metrics-addr", "127.0.0.1:0")
	p.cmd.Env = append(append(os.Environ(), prog.env...), "SOAK_TOKEN="+p.token)
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s serve: %w", prog.path, err)
	}
	announced := make(chan string, 2)
	go p.read(stderr, announced)
	timeout := time.After(30 * time.Second)
	for p.mcpURL == "" || p.metricsURL == "" {
		select {
		case u := <-announced:
			if strings.HasSuffix(u, "/mcp") {
				p.mcpURL = u
			} else {
				p.metricsURL = u
			}
		case <-p.exited:
			_, _, _, tail := p.log.counts()
			return nil, fmt.Errorf("serve exited at start: %v\n%s", p.waitErr, tail)
		case <-timeout:
			return nil, errors.Join(errors.New("serve did not announce its listeners within 30s"), p.kill())
		case <-ctx.Done():
			return nil, errors.Join(ctx.Err(), p.kill())
		}
	}
	return p, nil
}

// read follows serve's stderr until it ends, then reaps serve.
func (p *serveProc) read(r io.Reader, announced chan<- string) {
	lines := bufio.NewScanner(r)
	lines.Buffer(make([]byte, 64<<10), 1<<20)
	for lines.Scan() {
		line := lines.Text()
		p.log.add(line)
		if m := servingURL.FindStringSubmatch(line); m != nil {
			select {
			case announced <- m[1]:
			default:
			}
		}
	}
	io.Copy(io.Discard, r) // a line over 1 MiB: keep draining
	p.waitErr = p.cmd.Wait()
	close(p.exited)
}

// stop sends SIGTERM and waits up to grace: it returns how long serve
// took, and its exit error (nil for status 0); past grace it kills serve.
func (p *serveProc) stop(grace time.Duration) (time.Duration, error) {
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, fmt.Errorf("SIGTERM: %w", err)
	}
	select {
	case <-p.exited:
		return time.Since(start), p.waitErr
	case <-time.After(grace):
		return time.Since(start), errors.Join(fmt.Errorf("serve did not exit within %v of SIGTERM; killed", grace), p.kill())
	}
}

func (p *serveProc) kill() error {
	p.cmd.Process.Kill()
	<-p.exited
	return nil
}
