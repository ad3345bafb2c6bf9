package mcptest

import (
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// RedisServer is a real redis-server on a loopback port of its own, with
// no persistence, for the tests of the gateway's store. Stop and Start
// take it away and bring it back on the same port.
type RedisServer struct {
	t    testing.TB
	Port int
	cmd  *exec.Cmd
	log  *bytes.Buffer
}

// StartRedis starts redis-server (the Debian package redis-server, which
// scripts/install-redis.sh installs in `make deps`) and stops it when the
// test ends. A missing redis-server fails the test, in CI and out: the
// store's guarantees are tested against the real server or not at all.
func StartRedis(t testing.TB) *RedisServer {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatalf("redis-server is not installed: run ./scripts/install-redis.sh (make deps) (%v)", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	r := &RedisServer{t: t, Port: port}
	r.Start()
	t.Cleanup(r.Stop)
	return r
}

// URL is the server's redis:// URL.
func (r *RedisServer) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", r.Port) }

// Addr is the server's host:port.
func (r *RedisServer) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Port)) }

// Start starts the server (again) and waits until it accepts connections.
func (r *RedisServer) Start() {
	r.t.Helper()
	r.log = &bytes.Buffer{}
	r.cmd = exec.Command("redis-server", "--port", strconv.Itoa(r.Port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", r.t.TempDir(), "--loglevel", "warning")
	r.cmd.Stdout, r.cmd.Stderr = r.log, r.log
	if err := r.cmd.Start(); err != nil {
		r.t.Fatalf("starting redis-server: %v", err)
	}
	Eventually(r.t, 20*time.Second, func() bool {
		c, err := net.Dial("tcp", r.Addr())
		if err != nil {
			return false
		}
		c.Close()
		return true
	}, "redis-server to listen on %s (its log: %s)", r.Addr(), r.log)
}

// Stop kills the server and waits for it; stopping a stopped server does
// nothing.
func (r *RedisServer) Stop() {
	if r.cmd == nil {
		return
	}
	r.cmd.Process.Kill()
	r.cmd.Wait()
	r.cmd = nil
}

// Freeze stops the server's process (SIGSTOP) without closing its
// connections: a server that hangs. Thaw lets it go on.
func (r *RedisServer) Freeze() { r.cmd.Process.Signal(syscall.SIGSTOP) }

// Thaw resumes a frozen server (SIGCONT).
func (r *RedisServer) Thaw() { r.cmd.Process.Signal(syscall.SIGCONT) }
