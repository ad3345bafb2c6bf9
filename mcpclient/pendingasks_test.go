package mcpclient

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/tool"
)

// A server that sends hundreds of elicitations at once during a call, to
// a consumer that never answers: at most maxPendingAsks reach the
// consumer, the others are declined at once, and the ones it holds are
// cancelled when the call ends, although the server never withdraws them.
func TestPendingAsksBounded(t *testing.T) {
	const n = 300
	own, stopOwn := context.WithCancel(context.Background())
	var flood sync.WaitGroup
	t.Cleanup(func() { stopOwn(); flood.Wait() })
	var declined, returned atomic.Int64
	srv := mcp.NewServer(&mcp.Implementation{Name: "flooder", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "flood", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for range n {
			flood.Go(func() {
				res, err := req.Session.Elicit(own, &mcp.ElicitParams{Message: "?", RequestedSchema: json.RawMessage(`{"type":"object"}`)})
				if err == nil && res.Action == "decline" {
					declined.Add(1)
				}
				returned.Add(1)
			})
		}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	cfg := stdioConfig("flood")
	cfg.ProtocolVersion = "2025-11-25"
	h := mustStart(t, cfg, Options{Elicit: true, NewTransport: inMemory(t, srv)})

	var held, most atomic.Int64
	never := func(ctx context.Context, _ tool.Ask) (json.RawMessage, error) {
		k := held.Add(1)
		defer held.Add(-1)
		for m := most.Load(); k > m && !most.CompareAndSwap(m, k); m = most.Load() {
		}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	ctx, cancel := context.WithCancel(tool.WithAsk(context.Background(), never))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = h.reg.Execute(ctx, "mcp__flood__flood", nil)
	}()
	waitFor(t, "every request to be held or declined", func() bool { return held.Load()+returned.Load() == n })
	if m, d := most.Load(), declined.Load(); m > maxPendingAsks || d != n-m {
		t.Errorf("the consumer held %d requests at once (limit %d), %d were declined", m, maxPendingAsks, d)
	}
	if !h.log.HasRecord(slog.LevelWarn, "server requests refused: too many wait for an answer") {
		t.Errorf("the refusals were not logged:\n%s", h.log.Text())
	}
	cancel()
	<-done
	waitFor(t, "the held requests to end with the call", func() bool { return returned.Load() == n && held.Load() == 0 })
}

// A server's request that no call is waiting for goes to Options.Ask, and
// waits for its answer at most the entry's toolCallTimeoutMs: a consumer
// that never answers does not hold it (and its goroutine) for good.
func TestAskDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := mcppeer.Flooder()
		cfg := stdioConfig("flood")
		cfg.ProtocolVersion, cfg.ToolCallTimeout = "2025-11-25", 5*time.Second
		var held, ended atomic.Int64
		never := func(ctx context.Context, _ tool.Ask) (json.RawMessage, error) {
			held.Add(1)
			<-ctx.Done()
			ended.Add(1)
			return nil, ctx.Err()
		}
		h := &harness{t: t, reg: newRegistry(), log: mcptest.NewLog()}
		s, err := Start(cfg, Options{Registry: h.reg, Logger: h.log.Logger(), Elicit: true, Ask: never, NewTransport: func() (mcp.Transport, error) {
			ct, st := mcp.NewInMemoryTransports()
			_, err := srv.Connect(context.Background(), st, nil)
			return ct, err
		}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.WaitReady(context.Background()); err != nil {
			t.Fatal(err)
		}
		args, _ := json.Marshal(mcppeer.FloodArgs{N: 3, Kind: "elicit"})
		if res, _ := h.reg.Execute(context.Background(), "mcp__flood__flood", args); res.Text() != "flooded" {
			t.Fatalf("the flood: %q", res.Text())
		}
		synctest.Wait()
		if held.Load() != 3 || ended.Load() != 0 {
			t.Fatalf("%d requests put to the consumer, %d ended; want 3 waiting", held.Load(), ended.Load())
		}
		time.Sleep(cfg.ToolCallTimeout)
		synctest.Wait()
		if ended.Load() != 3 {
			t.Errorf("%d of 3 requests ended after toolCallTimeoutMs", ended.Load())
		}
	})
}
