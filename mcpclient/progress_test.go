package mcpclient

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// stepsServer has a tool that sends five progress notifications and
// returns at once: the last notification and the response travel
// back to back.
func stepsServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "steps", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "steps", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				for i := 1; i <= 5; i++ {
					if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 5, Message: fmt.Sprint("step ", i)}); err != nil {
						return nil, err
					}
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	return srv
}

// Every progress notification of a call reaches the caller, in order,
// before the call returns: 50 calls of a tool that sends five and answers
// at once, over a real stdio-like connection.
func TestProgressPrecedesResult(t *testing.T) {
	h := mustStart(t, Config{ServerName: "steps", Transport: TransportStdio, Command: "unused"}, Options{NewTransport: inMemory(t, stepsServer())})
	want := make([]tool.Progress, 5)
	for i := range want {
		want[i] = tool.Progress{Progress: float64(i + 1), Total: 5, Message: fmt.Sprint("step ", i+1)}
	}
	for call := range 50 {
		var got []tool.Progress // written by the connection's reader, read after the call returned
		ctx := tool.WithProgress(context.Background(), func(p tool.Progress) { got = append(got, p) })
		res, err := h.reg.Execute(ctx, "mcp__steps__steps", nil)
		if err != nil || res.IsError {
			t.Fatalf("call %d: %v %+v", call, err, res)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("call %d: progress seen before the result (-want +got):\n%s", call, diff)
		}
	}
}

// floodServer has a tool that sends n progress notifications, tells sent,
// and answers; and a tool that answers at once.
func floodServer(n int, sent chan<- struct{}) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "flood", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "flood", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tok := req.Params.GetProgressToken()
			for i := 1; i <= n; i++ {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(n)}); err != nil {
					return nil, err
				}
			}
			close(sent)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "flooded"}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "quick", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "quick"}}}, nil
		})
	return srv
}

// A consumer that stops taking progress (a stuck terminal or gateway
// client) while its server floods it stalls nothing else on the
// connection, and what waits for it stays bounded: the notifications are
// coalesced, the last one (the final state) always handed over before
// the call returns. The reader used to hand each notification to the
// consumer itself, so one stuck consumer stalled every result.
func TestProgressFloodToStuckConsumer(t *testing.T) {
	const n = 5000
	sent := make(chan struct{})
	h := mustStart(t, Config{ServerName: "flood", Transport: TransportStdio, Command: "unused"}, Options{NewTransport: inMemory(t, floodServer(n, sent))})
	release := make(chan struct{})
	unstick := sync.OnceFunc(func() { close(release) })
	t.Cleanup(unstick)      // before the harness closes, when the test fails
	var got []tool.Progress // appended by one hand-off at a time; read after the call returned
	ctx := tool.WithProgress(context.Background(), func(p tool.Progress) {
		if len(got) == 0 {
			<-release // stuck until the other call is answered
		}
		got = append(got, p)
	})
	flooded := make(chan error, 1)
	go func() {
		_, err := h.reg.Execute(ctx, "mcp__flood__flood", nil)
		flooded <- err
	}()
	waitSignal(t, sent, "the server to send its flood (the connection's reader stuck?)")
	// Read after the flood on the same connection: answered only if the
	// reader got past the stuck consumer.
	quick := make(chan error, 1)
	go func() {
		_, err := h.reg.Execute(context.Background(), "mcp__flood__quick", nil)
		quick <- err
	}()
	select {
	case err := <-quick:
		if err != nil {
			t.Fatalf("quick: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the other call on the connection was not answered while a consumer was stuck")
	}
	unstick()
	if err := <-flooded; err != nil {
		t.Fatalf("flood: %v", err)
	}
	if len(got) == 0 || got[len(got)-1].Progress != n {
		t.Fatalf("the final progress was not handed over: %d notifications, last %+v", len(got), got[len(got)-1:])
	}
	// At most the hand-off the consumer was stuck in and the queue.
	if len(got) > 2*maxPendingProgress {
		t.Errorf("%d notifications handed to a consumer stuck through %d: not coalesced", len(got), n)
	}
}
