package sandbox_test

import (
	"context"
	"errors"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/childproc"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/sandbox"
)

// startProbe starts this test binary as the probe server, confined by spec
// when it is not nil, and returns a session to it.
func startProbe(t *testing.T, spec *sandbox.Spec) (*mcp.ClientSession, *childproc.Transport) {
	t.Helper()
	if spec != nil {
		mcptest.RequireLandlock(t)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return startProbeAs(t, exe, nil, spec)
}

// startProbeAs is startProbe with the probe started as command (a script
// that execs this test binary in the end), its environment changed by env.
func startProbeAs(t *testing.T, command string, env map[string]string, spec *sandbox.Spec) (*mcp.ClientSession, *childproc.Transport) {
	t.Helper()
	env = maps.Clone(env)
	if env == nil {
		env = map[string]string{}
	}
	env[probeEnv] = "1"
	tr := &childproc.Transport{
		Command: command,
		Args:    []string{"-test.run=^$"},
		Env:     childproc.Env(os.Environ(), env),
		Sandbox: spec,
		Stderr:  func(line string) { t.Logf("probe stderr: %s", line) },
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("starting the probe: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, tr
}

// probe calls tool and returns its text, or "error: ..." when it failed.
func probe(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s: %v", tool, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError {
		return "error: " + text
	}
	return text
}

// attack is what a hostile server tries, and what the test sets up for it.
type attack struct {
	secret, allowed, writable, outside string // files and a directory
	heldFD                             int    // the secret, open without close-on-exec
	tcp, udp, unix, unixgram           string // listeners' addresses
	udpGot, unixgramGot                chan struct{}
}

func newAttack(t *testing.T) *attack {
	t.Helper()
	a := &attack{udpGot: make(chan struct{}, 16), unixgramGot: make(chan struct{}, 16)}
	secretDir, readDir, writeDir := t.TempDir(), t.TempDir(), t.TempDir()
	a.secret = filepath.Join(secretDir, "id_rsa")
	a.allowed = filepath.Join(readDir, "notes.txt")
	a.writable = writeDir
	a.outside = secretDir
	for path, text := range map[string]string{a.secret: "SECRET KEY", a.allowed: "public notes"} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The secret open in mcpbridge without close-on-exec, as a descriptor
	// mcpbridge inherited would be (a shell's 3<file): Landlock judges
	// paths, not reads through a descriptor the server was handed.
	fd, err := syscall.Open(a.secret, syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	a.heldFD = fd
	t.Cleanup(func() { syscall.Close(fd) })
	// A link inside the readable directory to the secret: Landlock judges
	// the file reached, not the name used.
	if err := os.Symlink(a.secret, filepath.Join(readDir, "link")); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go serveConns(ln)
	a.tcp = ln.Addr().String()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 64)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			a.udpGot <- struct{}{}
		}
	}()
	a.udp = pc.LocalAddr().String()
	// A daemon's pathname socket, as the Docker socket is: reachable by
	// path whatever the file rules say before Landlock ABI 9.
	a.unix = filepath.Join(secretDir, "daemon.sock")
	ul, err := net.Listen("unix", a.unix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ul.Close() })
	go serveConns(ul)
	// A daemon's datagram socket, as journald's is.
	a.unixgram = filepath.Join(secretDir, "daemon.dgram")
	ug, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: a.unixgram, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ug.Close() })
	go func() {
		buf := make([]byte, 64)
		for {
			if _, _, err := ug.ReadFrom(buf); err != nil {
				return
			}
			a.unixgramGot <- struct{}{}
		}
	}()
	return a
}

// serveConns reads each connection until the peer closes it, so that the
// probe's write after connecting never meets a closed socket.
func serveConns(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			_, _ = io.Copy(io.Discard, c)
			c.Close()
		}()
	}
}

func (a *attack) spec() *sandbox.Spec {
	return &sandbox.Spec{Read: []string{filepath.Dir(a.allowed)}, Write: []string{a.writable}}
}

// TestSandboxConfinesServer runs the same server with and without the
// sandbox: each attempt that works unconfined must fail confined.
func TestSandboxConfinesServer(t *testing.T) {
	a := newAttack(t)
	for _, tc := range []struct {
		name string
		spec *sandbox.Spec
	}{
		{"unconfined", nil},
		{"sandboxed", a.spec()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, _ := startProbe(t, tc.spec)
			confined := tc.spec != nil
			check := func(what, got string, wantOK bool) {
				t.Helper()
				if ok := strings.HasPrefix(got, "ok"); ok != wantOK {
					t.Errorf("%s: got %q, want success %v", what, got, wantOK)
				}
			}
			check("read a file in read", probe(t, cs, "read", map[string]any{"path": a.allowed}), true)
			check("read a file outside read", probe(t, cs, "read", map[string]any{"path": a.secret}), !confined)
			check("read it through a link in read", probe(t, cs, "read", map[string]any{"path": filepath.Join(filepath.Dir(a.allowed), "link")}), !confined)
			check("read a file mcpbridge holds open", probe(t, cs, "fdread", map[string]any{"fd": a.heldFD}), !confined)
			check("read mcpbridge's environment", probe(t, cs, "read", map[string]any{"path": "/proc/" + strconv.Itoa(os.Getpid()) + "/environ"}), !confined)
			check("write in write", probe(t, cs, "write", map[string]any{"path": filepath.Join(a.writable, "out")}), true)
			planted := filepath.Join(a.outside, "planted-"+tc.name)
			check("write outside write", probe(t, cs, "write", map[string]any{"path": planted}), !confined)
			check("write in read", probe(t, cs, "write", map[string]any{"path": a.allowed}), !confined)
			check("connect to a local TCP port", probe(t, cs, "dial", map[string]any{"network": "tcp", "addr": a.tcp}), !confined)
			check("connect to a daemon's UNIX socket", probe(t, cs, "dial", map[string]any{"network": "unix", "addr": a.unix}), !confined)
			check("make stream and seqpacket socket pairs", probe(t, cs, "pair", nil), true)
			for _, kind := range []string{"unixgram", "unixraw"} {
				check("send a datagram to a daemon's UNIX socket from a socket pair ("+kind+")", probe(t, cs, "dgram", map[string]any{"network": kind, "addr": a.unixgram}), !confined)
				if !confined {
					select {
					case <-a.unixgramGot: // sent and received: what the sandbox stops
					case <-time.After(10 * time.Second):
						t.Errorf("the unconfined server's datagram (%s) never reached the daemon's socket", kind)
					}
				} else if got := len(a.unixgramGot); got > 0 {
					t.Errorf("%d datagrams reached the daemon's socket from the confined server (%s)", got, kind)
				}
			}
			check("reach the user's kernel keyring", probe(t, cs, "keyring", nil), !confined)
			check("signal mcpbridge", probe(t, cs, "signal", map[string]any{"pid": os.Getpid()}), !confined)
			if _, err := os.Stat(planted); confined && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the file written outside write exists (stat: %v)", err)
			}
			// A failed send sends nothing; a successful one must arrive.
			check("send a UDP datagram to a local port", probe(t, cs, "dial", map[string]any{"network": "udp", "addr": a.udp}), !confined)
			if !confined {
				select {
				case <-a.udpGot:
				case <-time.After(10 * time.Second):
					t.Error("the unconfined server's UDP datagram never arrived")
				}
			}
		})
	}
}

// network: true leaves the network alone, and the resource limits reach
// the server, soft and hard, so that it cannot raise them again.
func TestSandboxNetworkAndLimits(t *testing.T) {
	a := newAttack(t)
	spec := a.spec()
	spec.Network = true
	spec.MemoryMiB, spec.Processes, spec.OpenFiles = 2048, 4096, 64
	cs, tr := startProbe(t, spec)
	if got := probe(t, cs, "dial", map[string]any{"network": "tcp", "addr": a.tcp}); got != "ok " {
		t.Errorf("connect with network: true: %q", got)
	}
	if got := probe(t, cs, "read", map[string]any{"path": a.secret}); !strings.HasPrefix(got, "error") {
		t.Errorf("read outside read with network: true: %q", got)
	}
	if got := probe(t, cs, "keyring", nil); !strings.HasPrefix(got, "error") {
		t.Errorf("the keyring with network: true: %q", got)
	}
	const want = "ok data=2147483648/2147483648 nproc=4096/4096 nofile=64/64"
	if got := probe(t, cs, "limits", nil); got != want {
		t.Errorf("limits = %q, want %q", got, want)
	}
	// Run as root (as the tests are), the server keeps no capability: with
	// network: true (no user namespace) it used to keep every one root
	// has (CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_SYS_MODULE, …).
	if got := probe(t, cs, "chown", map[string]any{"path": filepath.Join(a.writable, "given")}); os.Geteuid() == 0 && !strings.HasPrefix(got, "error") {
		t.Errorf("chown to another user with network: true, as root: %q, want it refused", got)
	}
	if p := tr.Process().Sandbox(); p == nil || !p.Network || p.ABI != sandbox.ABI() {
		t.Errorf("Process().Sandbox() = %+v, want network and ABI %d", p, sandbox.ABI())
	}
}
