package gateway

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// A session ends once no POST of its has run for the idle timeout, counted
// from the end of its last POST: a call that outlasts the timeout keeps
// it, and so do calls closer together than the timeout; then, left idle,
// it ends.
func TestSessionIdleTimeoutCountsFromLastPOST(t *testing.T) {
	const idle = 600 * time.Millisecond
	reg := tool.NewRegistry()
	for _, gt := range []tool.Tool{
		goTool("hello", textBody("hi")),
		goTool("slow", func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
			select {
			case <-time.After(3 * idle):
			case <-ctx.Done():
				return tool.Output{}, ctx.Err()
			}
			return tool.Output{Content: []tool.Content{tool.Text("done")}}, nil
		}),
	} {
		if _, err := reg.Register(gt); err != nil {
			t.Fatal(err)
		}
	}
	opts := Options{idleTimeout: idle}
	g := newGateway(t, reg, opts)
	base := serveHTTP(t, g, opts)
	cs, err := newSDKClient(&client{}).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(name string) error {
		_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name})
		return err
	}
	if err := call("slow"); err != nil {
		t.Fatalf("a call that outlasts the idle timeout: %v", err)
	}
	for i := range 6 {
		time.Sleep(idle / 4)
		if err := call("hello"); err != nil {
			t.Fatalf("call %d, %v after the one before: the session ended while in use: %v", i, idle/4, err)
		}
	}
	time.Sleep(3 * idle)
	if err := call("hello"); err == nil {
		t.Fatalf("the session still serves calls after %v idle (timeout %v)", 3*idle, idle)
	}
	if n := g.Sessions(); n != 0 {
		t.Errorf("%d sessions left after the idle timeout", n)
	}
}
