package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// nodeSetup says where the peer client lives.
type nodeSetup struct {
	bin         string // the node executable
	script      string // bench/node/client.mjs
	nodeModules string // holds @modelcontextprotocol/sdk
}

// findNode locates node and the pinned SDK under root; bin overrides the
// node executable. It says what is missing and how to install it.
func findNode(root, bin string) (nodeSetup, error) {
	nm := filepath.Join(root, "testdata", "thirdparty", "node_modules")
	if _, err := os.Stat(filepath.Join(nm, "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		return nodeSetup{}, fmt.Errorf("the Node TS SDK is not installed under %s (run scripts/install-thirdparty.sh): %w", nm, err)
	}
	if bin == "" {
		// The pinned Node 22 installed next to the SDK, else the system's.
		bin = filepath.Join(nm, ".bin", "node")
		if _, err := os.Stat(bin); err != nil {
			bin = "node" // untested: the pinned install always brings .bin/node
		}
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return nodeSetup{}, fmt.Errorf("finding node: %w", err)
	}
	return nodeSetup{bin: path, script: filepath.Join(root, "bench", "node", "client.mjs"), nodeModules: nm}, nil
}

// version returns `node --version`.
func (n nodeSetup) version() string {
	out, err := exec.Command(n.bin, "--version").Output()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return strings.TrimSpace(string(out))
}

// nodeCaller drives bench/node/client.mjs: one Node process with one TS SDK
// client connected to its own server child.
type nodeCaller struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Reader
	stderr  *tailBuffer
	version string
}

// nodeReply is one line from the script.
type nodeReply struct {
	OK              bool    `json:"ok"`
	Error           string  `json:"error"`
	ProtocolVersion string  `json:"protocolVersion"`
	Lat             []int64 `json:"lat"`
	Elapsed         int64   `json:"elapsed"`
}

func startNode(n nodeSetup, spec childSpec) (*nodeCaller, error) {
	childEnv, _ := json.Marshal(spec.env) // a map of strings always encodes
	cmd := exec.Command(n.bin, append([]string{n.script, n.nodeModules, spec.exe}, spec.args...)...)
	cmd.Env = append(cleanEnviron(), "BENCH_NODE_CHILD_ENV="+string(childEnv))
	stderr := &tailBuffer{max: 4 << 10}
	cmd.Stderr = stderr
	in, out, err := startPiped(cmd, "node client")
	if err != nil {
		return nil, err // untested: findNode checked the executable
	}
	c := &nodeCaller{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), stderr: stderr}
	r, err := c.read()
	if err != nil {
		return nil, errors.Join(err, c.close())
	}
	c.version = r.ProtocolVersion
	return c, nil
}

// read reads one reply; a failure carries the script's error or stderr.
func (c *nodeCaller) read() (nodeReply, error) {
	line, err := c.out.ReadBytes('\n')
	if err != nil {
		return nodeReply{}, fmt.Errorf("node client: reading its reply: %w (stderr: %s)", err, c.stderr)
	}
	var r nodeReply
	if err := json.Unmarshal(line, &r); err != nil {
		// untested: the script writes nothing but JSON lines to stdout
		return nodeReply{}, fmt.Errorf("node client: bad reply %q: %w", bytes.TrimSpace(line), err)
	}
	if !r.OK {
		return nodeReply{}, fmt.Errorf("node client: %s", r.Error)
	}
	return r, nil
}

// do sends one command, a JSON object, and reads its reply.
func (c *nodeCaller) do(cmd string) (nodeReply, error) {
	if _, err := io.WriteString(c.in, cmd+"\n"); err != nil {
		return nodeReply{}, fmt.Errorf("node client: sending a command: %w (stderr: %s)", err, c.stderr)
	}
	return c.read()
}

func (c *nodeCaller) protocol() string { return c.version }

func (c *nodeCaller) seq(_ context.Context, n int) ([]time.Duration, error) {
	r, err := c.do(fmt.Sprintf(`{"op":"seq","n":%d}`, n))
	if err != nil {
		return nil, err
	}
	if len(r.Lat) != n {
		// untested: the script answers every call or fails
		return nil, fmt.Errorf("node client: %d latencies for %d calls", len(r.Lat), n)
	}
	lat := make([]time.Duration, n)
	for i, ns := range r.Lat {
		lat[i] = time.Duration(ns)
	}
	return lat, nil
}

func (c *nodeCaller) conc(_ context.Context, n, workers int) (time.Duration, error) {
	r, err := c.do(fmt.Sprintf(`{"op":"conc","n":%d,"workers":%d}`, n, workers))
	if err != nil {
		return 0, err
	}
	return time.Duration(r.Elapsed), nil
}

// close ends stdin (the script closes its client, which stops the server)
// and waits for Node to exit.
func (c *nodeCaller) close() error {
	c.in.Close()
	if err := c.cmd.Wait(); err != nil {
		return fmt.Errorf("node client: %w (stderr: %s)", err, c.stderr)
	}
	return nil
}

// tailBuffer keeps the last max bytes written to it, for error messages.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = t.b[over:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}
