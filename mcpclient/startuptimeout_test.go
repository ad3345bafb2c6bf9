package mcpclient

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// stuckTransport's Connect returns only when released, whatever its
// context says: an attempt past its deadline that has not yet recorded
// its failure, held there.
type stuckTransport struct{ release chan struct{} }

func (s stuckTransport) Connect(context.Context) (mcp.Connection, error) {
	<-s.release
	return nil, errors.New("released")
}

// Status words a first attempt's timeout the same whenever it is read:
// once the attempt is past its deadline, before it recorded its failure
// (a host reading Status then used to show a text of its own), and after.
func TestStartupTimeoutWordedOnce(t *testing.T) {
	release := make(chan struct{})
	const want = "connecting: no answer within startupTimeoutMs (50ms): if the server is slow to start, raise startupTimeoutMs in its entry; else run its command (unused) by hand to see whether it starts and answers on stdout"
	cfg := Config{ServerName: "mute", Transport: TransportStdio, Command: "unused", StartupTimeout: 50 * time.Millisecond}
	srv, err := Start(cfg, Options{Registry: tool.NewRegistry(), OneShot: true,
		NewTransport: func() (mcp.Transport, error) { return stuckTransport{release}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	if st := srv.Status(); st.State != StateStarting || st.Err != "" {
		t.Fatalf("before the deadline: %s %q, want starting with no error", st.State, st.Err)
	}
	time.Sleep(time.Until(srv.firstDeadline) + 20*time.Millisecond)
	if st := srv.Status(); st.State != StateStarting || st.Err != want {
		t.Errorf("past the deadline, not yet recorded: %s %q, want starting, %q", st.State, st.Err, want)
	}
	close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = srv.WaitReady(ctx)
	if err == nil || err.Error() != want || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("first attempt: %v, want %q, a deadline", err, want)
	}
	if st := srv.Status(); st.State != StateTimedOut || st.Err != want {
		t.Errorf("recorded: %s %q, want timed-out, %q", st.State, st.Err, want)
	}
}
