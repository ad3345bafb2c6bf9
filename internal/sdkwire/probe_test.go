package sdkwire

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
)

// Assumption 18: on protocol 2026-07-28 the client falls back from
// server/discover to initialize (2025-11-25) when discover fails with
// -32601, so ProbeTransport's made-up answer to a probe the server ignores
// ends the handshake in a bound, and the server's other answers pass.
func TestContractSilentDiscoverFallback(t *testing.T) {
	var silent atomic.Int32
	tr := &ProbeTransport{
		Transport: pipeServer(t, mcppeer.RawScript{Silent: []string{"server/discover"}}),
		Bound:     200 * time.Millisecond,
		OnSilent:  func() { silent.Add(1) },
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	begin := time.Now()
	conn, err := tr.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &connTransport{conn}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	if took := time.Since(begin); took > 5*time.Second {
		t.Errorf("handshake took %v", took)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Errorf("protocol %q", v)
	}
	if silent.Load() != 1 {
		t.Errorf("OnSilent called %d times", silent.Load())
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Errorf("tools/list after the fallback: %v", err)
	}
	pumpStopped(t, conn)
}

// pumpStopped checks that the connection reads directly once the
// handshake is over: no goroutine hop for every message.
func pumpStopped(t *testing.T, conn mcp.Connection) {
	t.Helper()
	select {
	case <-conn.(*probeConn).pumpDone:
	case <-time.After(5 * time.Second):
		t.Error("the pump still runs after the handshake")
	}
}

// A server that answers the probe is never interrupted.
func TestProbeAnswered(t *testing.T) {
	tr := &ProbeTransport{Transport: pipeServer(t, mcppeer.RawScript{Pages: []mcppeer.RawPage{{}}}), Bound: time.Hour, OnSilent: func() { t.Error("OnSilent") }}
	conn, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), &connTransport{conn}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	pumpStopped(t, conn)
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Errorf("tools/list: %v", err)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
}

// countedReader counts the bytes read through it, once its gate opens.
type countedReader struct {
	r    io.Reader
	gate <-chan struct{}
	n    *atomic.Int64
}

func (c countedReader) Read(p []byte) (int, error) {
	<-c.gate
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// countedWriter counts the bytes handed to it to write (a pipe's buffer
// holds them before the reader does).
type countedWriter struct {
	w io.WriteCloser
	n *atomic.Int64
}

func (c countedWriter) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	return c.w.Write(p)
}

// A stdio server that reads nothing for longer than the bound (slow to
// start) and then serves the probe is spoken to on 2026-07-28: the bound
// runs from when it read the probe. Taken for one that ignores it, it
// served the probe late and refused the fallback initialize as a
// duplicate, which failed the handshake.
func TestProbeBoundFromRead(t *testing.T) {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	var written, read atomic.Int64
	gate := make(chan struct{})
	ss, err := newServer(nil).Connect(context.Background(), &mcp.IOTransport{Reader: io.NopCloser(countedReader{sr, gate, &read}), Writer: sw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	var silent atomic.Int32
	tr := &ProbeTransport{
		Transport: &LeanTransport{R: cr, W: countedWriter{cw, &written}, Close: cw.Close},
		Bound:     500 * time.Millisecond, // long enough to answer in once read
		OnSilent:  func() { silent.Add(1) },
		Unread:    func() int { return int(written.Load() - read.Load()) },
	}
	conn, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(2*tr.Bound, func() { close(gate) }) // the server starts reading
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, &connTransport{conn}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatalf("connect to a server slow to start: %v", err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" || silent.Load() != 0 {
		t.Errorf("protocol %q, OnSilent called %d times; want 2026-07-28 and none", v, silent.Load())
	}
}

// endingConn is a connection whose Read, waiting, ends with why once it is
// closed, as a stdio child's connection ends in the child's terms (its
// exit) when the child went away.
type endingConn struct {
	mcp.Connection
	closed chan struct{}
	why    error
}

func (c *endingConn) Read(context.Context) (jsonrpc.Message, error) {
	<-c.closed
	return nil, c.why
}

func (c *endingConn) Close() error { close(c.closed); return nil }

// A Read waiting when the connection is closed returns what the wrapped
// connection read last, its own account of its end, not a bare
// "connection closed": closed as its child exited (the SDK closes it when
// a write fails), a connection's Read chose between the two at random,
// and a server that exited before answering initialize was said to have
// closed the connection, its exit unsaid.
func TestProbeReadOfClosedConnectionSaysWhy(t *testing.T) {
	why := errors.New("the server exited before answering initialize (exit status 3)")
	for range 20 {
		tr := &ProbeTransport{Transport: &connTransport{&endingConn{closed: make(chan struct{}), why: why}}}
		conn, err := tr.Connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		read := make(chan error, 1)
		go func() {
			_, err := conn.Read(t.Context())
			read <- err
		}()
		time.Sleep(time.Millisecond) // the Read waits
		conn.Close()
		if err := <-read; !errors.Is(err, why) {
			t.Fatalf("the Read of a connection closed as its child exited: %v, want %v", err, why)
		}
	}
}
