package sdkwire

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Notifications the table consumes reach OnNotification, every one, and
// never the SDK's handlers, over a connection and over HTTP (an SSE
// response stream); the call's result still comes through.
func TestConsumedNotifications(t *testing.T) {
	const n = 50
	srv := newServer(nil)
	srv.AddTool(&mcp.Tool{Name: "chatty", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for i := range n {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i)})
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	for _, via := range []string{"connection", "http"} {
		t.Run(via, func(t *testing.T) {
			var table, sdk atomic.Int64
			tab := NewTable(0)
			tab.OnNotification(func(method string, _ json.RawMessage) {
				if method == "notifications/progress" {
					table.Add(1)
				}
			})
			tab.Consume("notifications/progress")
			copts := &mcp.ClientOptions{ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { sdk.Add(1) }}
			var cs *mcp.ClientSession
			if via == "http" {
				cs = connectHTTP(t, httpServer(t, srv, true), &CaptureRoundTripper{Base: http.DefaultTransport, Table: tab}, copts)
			} else {
				cs = connectInMemory(t, srv, copts, nil, func(tr mcp.Transport) mcp.Transport { return &CaptureTransport{Transport: tr, Table: tab} })
			}
			params := &mcp.CallToolParams{Name: "chatty"}
			params.SetProgressToken("tok")
			res, err := cs.CallTool(context.Background(), params)
			if err != nil {
				t.Fatal(err)
			}
			if got := text(t, res); got != "done" {
				t.Errorf("result %q", got)
			}
			if got, sdkGot := table.Load(), sdk.Load(); got != n || sdkGot != 0 {
				t.Errorf("the table got %d of %d notifications, the SDK's handler %d; want all, none", got, n, sdkGot)
			}
		})
	}
}
