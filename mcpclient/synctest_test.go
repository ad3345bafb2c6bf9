package mcpclient

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// The supervisor's timing, on a fake clock (testing/synctest): the default
// schedule of docs/upstream.md §3.9 is waited out exactly, with no real sleeping.
func TestSupervisorScheduleOnFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := newMemServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}))
		var attempts atomic.Int32
		var mu sync.Mutex
		var times []time.Time
		newTransport := func() (mcp.Transport, error) {
			mu.Lock()
			times = append(times, time.Now())
			mu.Unlock()
			if attempts.Add(1) > 1 {
				return nil, errors.New("server gone")
			}
			return mem.transport()
		}
		cfg := stdioConfig("srv") // default policy: 500ms doubling to 30s, 10 attempts
		h := &harness{t: t, reg: newRegistry(), log: mcptest.NewLog()}
		s, err := Start(cfg, Options{Registry: h.reg, Logger: h.log.Logger(), NewTransport: newTransport})
		if err != nil {
			t.Fatal(err)
		}
		h.srv = s
		if err := s.WaitReady(context.Background()); err != nil {
			t.Fatal(err)
		}
		lost := time.Now()
		mem.crash(1)
		synctest.Wait()
		// Sleeping in the bubble advances the fake clock past every backoff.
		time.Sleep(10 * time.Minute)
		synctest.Wait()
		if !h.log.HasRecord(slog.LevelError, msgGiveUp, "max_attempts", 10) {
			t.Fatalf("no give-up:\n%s", h.log.Text())
		}
		mu.Lock()
		var gaps []time.Duration
		prev := lost
		for _, at := range times[1:] {
			gaps = append(gaps, at.Sub(prev))
			prev = at
		}
		mu.Unlock()
		want := []time.Duration{500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000, 30000}
		if len(gaps) != len(want) {
			t.Fatalf("%d reconnect attempts, want %d: %v", len(gaps), len(want), gaps)
		}
		for i, g := range gaps {
			if g != want[i]*time.Millisecond {
				t.Errorf("attempt %d came %v after the previous, want %v", i+1, g, want[i]*time.Millisecond)
			}
		}
		if h.reg.Len() != 0 {
			t.Error("tools left after give-up")
		}
		s.Close()
	})
}
