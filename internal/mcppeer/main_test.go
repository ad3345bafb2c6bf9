package mcppeer_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

func TestMain(m *testing.M) {
	mcppeer.RunIfChild()
	mcptest.VerifyTestMain(m)
}

// waitLimit bounds every wait for an event; it only decides how long a
// broken test hangs before failing, never whether a working one passes.
const waitLimit = 20 * time.Second

func newClient(opts *mcp.ClientOptions) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "mcptest-test", Version: "0"}, opts)
}

// connectInMemory connects a client to srv over in-memory pipes; both ends
// close when the test ends.
func connectInMemory(t *testing.T, srv *mcp.Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	cs, err := newClient(opts).Connect(ctx, ct, nil)
	if err != nil {
		ss.Close()
		t.Fatalf("client Connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// syncBuffer is a bytes.Buffer safe to write from a child's stderr copier
// while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// connectChild spawns this test binary as a child of the given kind, as the
// bridge would from ChildCommand's output, and connects a client to it.
func connectChild(t *testing.T, opts *mcp.ClientOptions, kind string, extraEnv ...string) (*mcp.ClientSession, *syncBuffer) {
	t.Helper()
	command, args, env := mcptest.ChildCommand(t, kind, extraEnv...)
	cmd := exec.Command(command, args...)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	cs, err := newClient(opts).Connect(context.Background(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connecting to the %s child: %v (stderr: %s)", kind, err, stderr.String())
	}
	t.Cleanup(func() { cs.Close() })
	return cs, stderr
}

// waitFor fails the test if ch does not deliver within waitLimit.
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("timed out after %v waiting for %s", waitLimit, what)
		panic("unreachable")
	}
}

// signal returns a func that sends on a buffered channel without blocking,
// for callbacks that may fire more than once.
func signal() (func(), <-chan struct{}) {
	ch := make(chan struct{}, 16)
	return func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}, ch
}

// asJSON re-decodes v into plain JSON values, for cmp.Diff against
// literals.
// pipes returns the two ends of a bidirectional in-process stream:
// what the server reads and writes, and what the client reads and writes.
type pipeEnds struct {
	serverR *io.PipeReader
	serverW *io.PipeWriter
	clientR *io.PipeReader
	clientW *io.PipeWriter
}

func newPipes() pipeEnds {
	var p pipeEnds
	p.serverR, p.clientW = io.Pipe()
	p.clientR, p.serverW = io.Pipe()
	return p
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
