package mcpclient

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/tool"
)

// A server flooding log messages during a call, on a fake clock that does
// not move meanwhile: the caller and the log take the burst and no more,
// and the call's end reports how many were dropped. A second later the
// limit has room again.
func TestLogFloodRateLimited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 3000
		srv := mcppeer.Flooder()
		cfg := stdioConfig("flood")
		cfg.ProtocolVersion, cfg.LogLevel = "2025-11-25", "debug"
		h := &harness{t: t, reg: newRegistry(), log: mcptest.NewLog()}
		s, err := Start(cfg, Options{Registry: h.reg, Logger: h.log.Logger(), NewTransport: func() (mcp.Transport, error) {
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
		var got atomic.Int64
		ctx := tool.WithLog(context.Background(), func(json.RawMessage) { got.Add(1) })
		flood := func(n int) {
			args, _ := json.Marshal(mcppeer.FloodArgs{N: n, Kind: "notify"})
			if res, _ := h.reg.Execute(ctx, "mcp__flood__flood", args); res.Text() != "flooded" {
				t.Fatalf("the flood: %q", res.Text())
			}
		}
		flood(n)
		if g := got.Load(); g != logLineBurst {
			t.Errorf("the caller got %d of %d log messages, want the burst of %d", g, n, logLineBurst)
		}
		if c := h.log.CountRecords(slog.LevelWarn, "server log message"); c != logLineBurst {
			t.Errorf("%d log records, want %d", c, logLineBurst)
		}
		if !h.log.HasRecord(slog.LevelWarn, "server log messages dropped: over the rate limit", "dropped", n-logLineBurst) {
			t.Errorf("the drop was not reported:\n%s", h.log.Text())
		}
		time.Sleep(time.Second)
		flood(10)
		if g := got.Load(); g != logLineBurst+10 {
			t.Errorf("after a second the caller got %d more", g-logLineBurst)
		}
	})
}
