package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// flooderConfig is a config with the flooder server (this test binary).
func flooderConfig(t *testing.T) string {
	cmd, args, env := mcptest.ChildCommand(t, "flooder")
	argsJSON, _ := json.Marshal(args)
	envJSON, _ := json.Marshal(env)
	return writeConfig(t, fmt.Sprintf(`- id: flooder
  name: mcp-client
  config:
    serverName: flooder
    transport: stdio
    command: %s
    args: %s
    env: %s
    protocolVersion: "2025-11-25"
`, cmd, argsJSON, envJSON))
}

// SIGTERM while a backend's elicitations wait for a client that never
// answers, some of them sent during a call still in flight and a thousand
// after calls that returned: serve exits 0, well within its shutdown grace.
func TestServeSIGTERMWithAsksPending(t *testing.T) {
	p := startServing(t, []string{"GW_AUTH=s3cret"}, "serve", "--http", "127.0.0.1:0", "--config", flooderConfig(t), "--token-env", "GW_AUTH")
	var asked atomic.Int64
	client := mcp.NewClient(&mcp.Implementation{Name: "mute", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			<-ctx.Done() // never answers
			return nil, ctx.Err()
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: p.url, HTTPClient: &http.Client{Transport: bearer{"s3cret"}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	waitTools(t, cs, "mcp__flooder__flood")
	if got, _ := callText(t, cs, "mcp__flooder__flood", `{"n":1000,"kind":"elicit"}`); got != "flooded" {
		t.Fatalf("the flood: %q", got)
	}
	go cs.CallTool(ctx, &mcp.CallToolParams{Name: "mcp__flooder__flood", Arguments: map[string]any{"n": 100, "kind": "elicit", "wait": true}})
	mcptest.Eventually(t, 30*time.Second, func() bool { return asked.Load() > 0 }, "the client to be asked")
	start := time.Now()
	p.stop(t)
	took := time.Since(start)
	if took > 5*time.Second {
		t.Errorf("serve took %v to exit after SIGTERM\n%s", took, p.stderr)
	}
	t.Logf("serve exited %v after SIGTERM; the client was asked %d times", took, asked.Load())
}
