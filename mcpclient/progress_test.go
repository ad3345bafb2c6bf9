package mcpclient

import (
	"context"
	"fmt"
	"testing"

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
