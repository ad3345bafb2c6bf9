package gateway

import (
	"context"
	"encoding/json"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// flooder is a backend whose "flood" tool sends n elicitation requests at
// once and waits until its call is cancelled. The requests are its own,
// not the call's: like an attacker's, they are not withdrawn with it.
type flooder struct {
	returned atomic.Int64 // requests answered, declined or failed
	own      context.Context
}

func newFlooder(t *testing.T) (*flooder, *mcp.Server) {
	own, cancel := context.WithCancel(context.Background())
	f := &flooder{own: own}
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	srv := mcp.NewServer(&mcp.Implementation{Name: "flooder", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "flood", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct{ N int }
		_ = json.Unmarshal(req.Params.Arguments, &args)
		for range args.N {
			wg.Go(func() {
				_, _ = req.Session.Elicit(f.own, &mcp.ElicitParams{Message: "?", RequestedSchema: json.RawMessage(`{"type":"object"}`)})
				f.returned.Add(1)
			})
		}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	return f, srv
}

// A client that never answers, and backends that send thousands of
// elicitations during its calls: at most MaxAsksPerSession reach the
// client at once, the others are declined at once, and when the calls end
// every request still waiting is cancelled, its goroutines gone.
func TestAskFloodIsBounded(t *testing.T) {
	const n = 2000 // per backend
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	reg := tool.NewRegistry()
	var floods []*flooder
	for _, name := range []string{"one", "two"} {
		f, srv := newFlooder(t)
		floods = append(floods, f)
		startMemBackendWith(t, mcpclient.Config{ServerName: name, Transport: mcpclient.TransportStdio, Command: "unused", ProtocolVersion: "2025-11-25"},
			mcpclient.Options{Registry: reg, Elicit: true}, srv)
	}
	g := newGateway(t, reg, Options{})
	var held, most atomic.Int64
	client := mcp.NewClient(&mcp.Implementation{Name: "mute", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			h := held.Add(1)
			defer held.Add(-1)
			for m := most.Load(); h > m && !most.CompareAndSwap(m, h); m = most.Load() {
			}
			<-ctx.Done() // never answers
			return nil, ctx.Err()
		},
	})
	cs, _ := connectClient(t, g, client, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	before := runtime.NumGoroutine()

	callCtx, endCalls := context.WithCancel(ctx)
	var calls sync.WaitGroup
	for _, name := range []string{"one", "two"} {
		calls.Go(func() {
			_, _ = cs.CallTool(callCtx, &mcp.CallToolParams{Name: "mcp__" + name + "__flood", Arguments: map[string]any{"n": n}})
		})
	}
	settled := func() bool { return held.Load()+floods[0].returned.Load()+floods[1].returned.Load() == 2*n }
	waitFor(t, "every request to be held by the client or answered", settled)
	peak := runtime.NumGoroutine()
	var mem runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&mem)
	if m := most.Load(); m > MaxAsksPerSession {
		t.Errorf("the client held %d requests at once, over the limit of %d", m, MaxAsksPerSession)
	}
	if peak-before > 400 {
		t.Errorf("%d goroutines while %d requests were pending (%d before)", peak, 2*n, before)
	}
	endCalls()
	calls.Wait()
	waitFor(t, "every request to end with its call", func() bool {
		return floods[0].returned.Load()+floods[1].returned.Load() == 2*n && held.Load() == 0
	})
	waitFor(t, "the goroutines to go", func() bool { return runtime.NumGoroutine() <= before+10 })
	t.Logf("%d elicitations: %d goroutines before, %d at the peak (heap in use %d MiB), at most %s held by the client", 2*n, before, peak, mem.HeapInuse>>20, strconv.FormatInt(most.Load(), 10))
}
