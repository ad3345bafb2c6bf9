package mcpclient

import (
	"context"
	"encoding/json"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/tool"
)

// BenchmarkCall is one call of the echo tool of a fixture child (this
// binary re-executed as a stdio server) through a Server, as a gateway
// makes it: in a cancelable context of its own, for a consumer that
// forwards the result as it came. "64-callers" runs 64 at once, as the
// process bench's 64-caller rows. The child's cost is not in allocs/op.
func BenchmarkCall(b *testing.B) {
	reg := tool.NewRegistry()
	srv, err := Start(Config{
		ServerName: "fixture",
		Transport:  TransportStdio,
		Command:    os.Args[0],
		Env:        map[string]string{mcppeer.ChildEnv: "fixture"},
	}, Options{Registry: reg})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	ready, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.WaitReady(ready); err != nil {
		b.Fatal(err)
	}
	const name = "mcp__fixture__echo"
	args := json.RawMessage(`{"message":"hi"}`)
	base := tool.WithConsumer(context.Background(), tool.Consumer{Forwards: name})
	call := func(b *testing.B) {
		ctx, cancel := context.WithCancelCause(base)
		defer cancel(nil)
		if res, err := reg.Execute(ctx, name, args); err != nil || res.IsError {
			b.Errorf("call: %v %+v", err, res)
		}
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			call(b)
		}
	})
	b.Run("64-callers", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				call(b)
			}
		})
	})
}
