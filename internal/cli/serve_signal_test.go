package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A terminal hung up (SIGHUP) stops serve as SIGTERM does: the call in
// flight is answered, cancelled, and serve exits 0 (it died of the signal,
// the call cut off with no answer). Started with SIGHUP ignored (nohup),
// serve keeps it ignored and goes on serving.
func TestServeSIGHUPStopsInOrder(t *testing.T) {
	cfg := writeConfig(t, fixtureEntries(t, "a"))
	t.Run("hung up", func(t *testing.T) {
		// Under nohup the tests would pass SIGHUP on to serve ignored, and
		// serve keeps ignoring it (as "nohup" below checks): caught here,
		// it starts serve at its default (exec resets caught signals).
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
		p := startServing(t, nil, "serve", "--http", "127.0.0.1:0", "--config", cfg)
		started := make(chan struct{}, 1)
		cs := connectHTTP(t, p.url, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			if r.Params.Message == "started" {
				started <- struct{}{}
			}
		}})
		waitTools(t, cs, "mcp__a__slow")
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		type answer struct {
			res *mcp.CallToolResult
			err error
		}
		got := make(chan answer, 1)
		go func() {
			params := &mcp.CallToolParams{Name: "mcp__a__slow", Arguments: json.RawMessage(`{"ms": 600000}`)}
			params.SetProgressToken("slow")
			res, err := cs.CallTool(ctx, params)
			got <- answer{res, err}
		}()
		select {
		case <-started: // the call runs on the server
		case a := <-got:
			t.Fatalf("the call returned at once: %+v, %v", a.res, a.err)
		}
		if err := p.signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		if err := p.wait(t); err != nil {
			t.Errorf("exit after SIGHUP: %v\n%s", err, p.stderr)
		}
		if !strings.Contains(p.stderr.String(), `msg=stopping why="hangup signal received"`) {
			t.Errorf("serve's log does not say it stops for the hangup:\n%s", p.stderr)
		}
		a := <-got
		if a.err != nil || !a.res.IsError || len(a.res.Content) != 1 ||
			!strings.Contains(a.res.Content[0].(*mcp.TextContent).Text, "the gateway is shutting down") {
			t.Errorf("the call in flight: %+v, %v; want its cancellation answered", a.res, a.err)
		}
	})
	t.Run("nohup", func(t *testing.T) {
		serve := mcpbridgeCommand(t, "serve", "--http", "127.0.0.1:0", "--config", cfg)
		cmd := exec.Command("sh", append([]string{"-c", `trap '' HUP; exec "$0" "$@"`, serve.Path}, serve.Args[1:]...)...)
		cmd.Env = serve.Env
		p := startServingCmd(t, cmd, nil)
		if err := p.signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		cs := connectHTTP(t, p.url, nil) // still serving
		waitTools(t, cs, "mcp__a__greet")
		cs.Close()
		p.stop(t)
	})
}

// connectHTTP connects an MCP client to url, closed with the test.
func connectHTTP(t *testing.T, url string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
