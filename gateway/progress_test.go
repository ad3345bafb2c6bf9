package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// stepsBackend starts an mcp-client backend whose tool "steps" sends five
// progress notifications and answers at once.
func stepsBackend(t *testing.T, reg *tool.Registry) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "steps", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "steps", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for i := 1; i <= 5; i++ {
				p := &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 5, Message: fmt.Sprint("step ", i)}
				if err := req.Session.NotifyProgress(ctx, p); err != nil {
					return nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	startMemBackend(t, reg, mcpclient.Config{ServerName: "steps", Transport: mcpclient.TransportStdio, Command: "unused"}, srv)
}

// Every progress notification of a backend reaches the client that made
// the call, in order, before the call's response: 50 calls of a tool that
// sends five and answers at once, read off the client's wire.
func TestProgressForwardedBeforeResult(t *testing.T) {
	reg := tool.NewRegistry()
	stepsBackend(t, reg)
	for _, sdkOnly := range []bool{false, true} { // the take, the SDK's
		t.Run(fmt.Sprint("sdkOnly ", sdkOnly), func(t *testing.T) {
			g := newGateway(t, reg, Options{})
			viaSDK := sdkCalls(g)
			c := connectRaw
			if sdkOnly {
				c = connectRawSDK
			}
			progressBeforeResult(t, c(t, g))
			if taken := viaSDK.Load() == 0; taken == sdkOnly {
				t.Errorf("the take answered: %v", taken)
			}
		})
	}
}

// progressBeforeResult makes 50 calls of steps on c and checks that each
// one's five progress notifications arrive, in order, before its response.
func progressBeforeResult(t *testing.T, c *rawClient) {
	want := []string{"step 1", "step 2", "step 3", "step 4", "step 5"}
	for call := 1; call <= 50; call++ {
		id := strconv.Itoa(1000 + call)
		c.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"mcp__steps__steps","arguments":{},"_meta":{"progressToken":"p` + id + `"}}}`)
		var got []string
		for {
			var m wireMessage
			if err := json.Unmarshal(waitSignal(t, c.lines, "the call's messages"), &m); err != nil {
				t.Fatal(err)
			}
			if m.Method == "notifications/progress" {
				var p mcp.ProgressNotificationParams
				if err := json.Unmarshal(m.Params, &p); err != nil || p.ProgressToken != "p"+id {
					t.Fatalf("call %d: progress %s (%v)", call, m.Params, err)
				}
				got = append(got, p.Message)
				continue
			}
			if string(m.ID) == id {
				if m.Error != nil {
					t.Fatalf("call %d: %+v", call, m.Error)
				}
				break
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("call %d: progress before the response (-want +got):\n%s", call, diff)
		}
	}
}
