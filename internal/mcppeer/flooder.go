//lint:file-ignore SA1019 the flooder uses logging, sampling and roots the 2025-11-25 way, as the servers it stands for do.

package mcppeer

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FloodArgs are the arguments of the flooder's flood tool.
type FloodArgs struct {
	// N is how many messages to send.
	N int `json:"n"`
	// Kind is what they are: "elicit", "sample" or "roots" (requests the
	// server sends and never withdraws: they are its own, not the call's),
	// or "notify" (a log message and a progress notification each).
	Kind string `json:"kind"`
	// Wait makes the call return only when cancelled; else it returns once
	// every message is sent (requests still waiting for their answers).
	Wait bool `json:"wait,omitempty"`
}

// Flooder is a go-sdk server whose "flood" tool ([FloodArgs]) floods its
// client with requests or notifications, the way a hostile server would.
// The requests outlive the call until the client answers them or the
// connection ends.
func Flooder() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "flooder", Version: "1.0.0"}, nil)
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"kind":{"type":"string"},"wait":{"type":"boolean"}}}`)
	s.AddTool(&mcp.Tool{Name: "flood", Description: "Floods its client.", InputSchema: schema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args FloodArgs
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return nil, err
		}
		if args.Kind == "notify" {
			notifyFlood(ctx, req, args.N)
		} else {
			// Detached from the call: they end with the connection.
			own := context.WithoutCancel(ctx)
			for range args.N {
				go askOnce(own, req.Session, args.Kind)
			}
		}
		if args.Wait {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return textResult("flooded"), nil
	})
	return s
}

// askOnce sends one request of kind and ignores its answer.
func askOnce(ctx context.Context, ss *mcp.ServerSession, kind string) {
	switch kind {
	case "elicit":
		_, _ = ss.Elicit(ctx, &mcp.ElicitParams{Message: "?", RequestedSchema: json.RawMessage(`{"type":"object"}`)})
	case "sample":
		_, _ = ss.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 1, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "?"}}}})
	case "roots":
		_, _ = ss.ListRoots(ctx, nil)
	}
}

// notifyFlood sends n log messages and n progress notifications (when the
// call has a progress token) as fast as the connection takes them.
func notifyFlood(ctx context.Context, req *mcp.CallToolRequest, n int) {
	tok := req.Params.GetProgressToken()
	for i := range n {
		if ctx.Err() != nil {
			return
		}
		_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Logger: "flood", Data: "line of the flood"})
		if tok != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(n)})
		}
	}
}
