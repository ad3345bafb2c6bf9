package mcptest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
)

// connectErr connects a client to srv in memory with ctx and returns the
// handshake's error; the session is closed at once.
func connectErr(ctx context.Context, t *testing.T, srv *mcp.Server, version string) error {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatalf("server Connect: %v", err)
	}
	defer ss.Wait()
	cs, err := newClient(nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		ss.Close()
		return err
	}
	cs.Close()
	return nil
}

// Both handshakes (server/discover first, and the legacy initialize) are
// held, and a hold's error fails the handshake.
func TestHoldHandshake(t *testing.T) {
	for _, version := range []string{"", "2025-06-18"} {
		t.Run("version "+version, func(t *testing.T) {
			var mu sync.Mutex
			var held int
			srv := mcppeer.Fixture(mcppeer.FixtureOptions{})
			HoldHandshake(srv, func(context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				held++
				return nil
			})
			if err := connectErr(context.Background(), t, srv, version); err != nil {
				t.Fatalf("connect: %v", err)
			}
			mu.Lock()
			if held == 0 {
				t.Errorf("the handshake was not held")
			}
			mu.Unlock()

			refusing := mcppeer.Fixture(mcppeer.FixtureOptions{})
			HoldHandshake(refusing, func(context.Context) error { return errors.New("not today") })
			if err := connectErr(context.Background(), t, refusing, version); err == nil || !strings.Contains(err.Error(), "not today") {
				t.Errorf("connect to a refusing server: %v, want the hold's error", err)
			}
		})
	}
}

func TestSleepAndHang(t *testing.T) {
	srv := mcppeer.Fixture(mcppeer.FixtureOptions{})
	HoldHandshake(srv, Sleep(time.Millisecond))
	if err := connectErr(context.Background(), t, srv, ""); err != nil {
		t.Fatalf("connect to a slow server: %v", err)
	}

	// A cancelled sleep ends at once.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(time.Hour)(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Sleep = %v", err)
	}

	// A hanging server keeps the client waiting until it gives up; the hold
	// ends with the request.
	hung := mcppeer.Fixture(mcppeer.FixtureOptions{})
	release := make(chan struct{})
	defer close(release)
	HoldHandshake(hung, Hang(release))
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := connectErr(ctx, t, hung, ""); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("connect to a hanging server: %v, want a deadline error", err)
	}

	rel := make(chan struct{})
	close(rel)
	if err := Hang(rel)(context.Background()); err == nil || !strings.Contains(err.Error(), "released") {
		t.Errorf("released Hang = %v", err)
	}
}

// A Barrier lets nobody through until n have arrived.
func TestBarrier(t *testing.T) {
	b := NewBarrier(3)
	errs := make(chan error, 3)
	for range 2 {
		go func() { errs <- b.Hold(context.Background()) }()
	}
	Eventually(t, waitLimit, func() bool { return b.Arrived() >= 2 }, "the first two to arrive")
	select {
	case err := <-errs:
		t.Fatalf("a hold returned (%v) before all had arrived", err)
	default:
	}
	go func() { errs <- b.Hold(context.Background()) }()
	for range 3 {
		if err := <-errs; err != nil {
			t.Errorf("Hold = %v", err)
		}
	}
	if b.Arrived() != 3 {
		t.Errorf("Arrived = %d", b.Arrived())
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := NewBarrier(2).Hold(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Hold = %v", err)
	}
}
