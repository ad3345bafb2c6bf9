//go:build linux

package childproc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// The kernel sends the parent-death signal when the thread that started
// the child ends, not the process. A Go thread ends when a goroutine that
// locked it exits; here the caller of Connect is such a goroutine, and the
// child must outlive its thread all the same.
func TestChildOutlivesTheStartingThread(t *testing.T) {
	tr := helperTransport(t, "mcp")
	type started struct {
		cs  *mcp.ClientSession
		tid int
		err error
	}
	ch := make(chan started)
	var s started
	for s.tid == 0 {
		go func() {
			runtime.LockOSThread()
			if unix.Gettid() == os.Getpid() {
				// The main thread is never ended, only parked: try another.
				runtime.UnlockOSThread()
				ch <- started{}
				return
			}
			// Never unlocked: the thread ends with this goroutine.
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
			ch <- started{cs, unix.Gettid(), err}
		}()
		s = <-ch
	}
	if s.err != nil {
		t.Fatalf("Connect: %v", s.err)
	}
	t.Cleanup(func() { _ = s.cs.Close() })
	mcptest.Eventually(t, hangGuard, func() bool {
		_, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", s.tid))
		return errors.Is(err, os.ErrNotExist)
	}, "the starting thread %d to end", s.tid)

	// By now a parent-death signal would have been sent: a child that
	// still answers was spared.
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	if err := s.cs.Ping(ctx, nil); err != nil {
		t.Fatalf("ping: %v (the child died with the thread that started it: %v)", err, tr.Process().ExitErr())
	}
}
