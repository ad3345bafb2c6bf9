package gateway

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK is poked for a session its handler has not seen for a while
// when a fast-path call starts, and every period while a long call runs;
// not at all while it sees the session's POSTs itself.
func TestKeepAliveDuringFastCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var pokes atomic.Int64
		ss := &mcp.ServerSession{} // ID "" for a session without a connection
		k := newKeepAlive(10*time.Minute, func(*mcp.ServerSession) { pokes.Add(1) })
		k.during(ss, func() {})
		if pokes.Load() != 1 {
			t.Fatalf("a call on a session the SDK never saw: %d pokes, want 1", pokes.Load())
		}
		k.during(ss, func() { time.Sleep(25 * time.Minute) })
		if pokes.Load() != 3 {
			t.Fatalf("a 25-minute call: %d pokes in all, want 3 (one at each 10 minutes)", pokes.Load())
		}
		time.Sleep(11 * time.Minute)
		synctest.Wait()
		if pokes.Load() != 3 {
			t.Fatalf("after the call: %d pokes, want none more", pokes.Load())
		}
		k.seen(ss.ID())
		k.during(ss, func() {})
		if pokes.Load() != 3 {
			t.Fatalf("a call just after the SDK's own POST: %d pokes, want none more", pokes.Load())
		}
	})
}
