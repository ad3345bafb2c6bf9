package mcpclient

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// A one-shot call that times out or is interrupted tells the server before
// Close returns: the notifications/cancelled the SDK sends on a goroutine
// of its own is flushed, every time, before the child's stdin closes.
func TestOneShotCancelReachesServerBeforeClose(t *testing.T) {
	cmd, args, env := mcptest.ChildCommand(t, "fixture", mcppeer.NotifyTraceEnv+"=1")
	const rounds = 20
	lost := 0
	for i := range rounds {
		cfg := Config{ServerName: "once", Transport: TransportStdio, Command: cmd, Args: args, Env: env}
		cfg.ToolCallTimeout = 100 * time.Millisecond
		// The shutdown ladder's own graces: the harness's short ones could
		// stop a child on a loaded machine before it logs what it read.
		h := mustStart(t, cfg, Options{OneShot: true, CloseGrace: 2 * time.Second, TermGrace: 2 * time.Second})
		ctx := context.Background()
		if i%2 == 1 { // interrupted rather than timed out
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
		}
		res, _ := h.reg.Execute(ctx, "mcp__once__slow", json.RawMessage(`{"ms":60000}`))
		if !res.IsError {
			t.Fatalf("round %d: slow call succeeded: %+v", i, res)
		}
		if err := h.srv.Close(); err != nil {
			t.Fatalf("round %d: Close: %v", i, err)
		}
		if !h.log.HasRecord(slog.LevelInfo, "child output", "line", "received notifications/cancelled") {
			lost++
			t.Logf("round %d: the server never saw notifications/cancelled:\n%s", i, h.log.Text())
		}
	}
	if lost > 0 {
		t.Errorf("notifications/cancelled lost in %d of %d rounds", lost, rounds)
	}
}
