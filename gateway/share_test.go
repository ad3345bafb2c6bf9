package gateway

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// counterServer is a backend with per-connection state: its "count" tool
// answers how many times it was called on this connection. open counts
// its connections that have not ended.
func counterServer(t *testing.T, open *atomic.Int64) (*mcp.Server, func() (mcp.Transport, error)) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "counter", Version: "1"}, nil)
	var mu sync.Mutex
	counts := map[*mcp.ServerSession]int{}
	srv.AddTool(&mcp.Tool{Name: "count", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		mu.Lock()
		counts[req.Session]++
		n := counts[req.Session]
		mu.Unlock()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(n)}}}, nil
	})
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	return srv, func() (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(context.Background(), st, nil)
		if err != nil {
			return nil, err
		}
		open.Add(1)
		wg.Go(func() { ss.Wait(); open.Add(-1) })
		t.Cleanup(func() { ss.Close() })
		return ct, nil
	}
}

// With share: session each client session has an instance of the backend
// of its own: per-connection state is never shared between clients, a
// session's instance ends with the session, and instances are bounded.
func TestShareSession(t *testing.T) {
	var open atomic.Int64
	_, transport := counterServer(t, &open)
	reg := tool.NewRegistry()
	cfg := mcpclient.Config{ServerName: "ctr", Transport: mcpclient.TransportStdio, Command: "unused", Share: mcpclient.ShareSession}
	startClient(t, cfg, mcpclient.Options{Registry: reg, NewTransport: transport})
	g := newGateway(t, reg, Options{})
	a, c := connectInMemory(t, g), connectInMemory(t, g)
	for i, want := range []struct {
		who  *client
		text string
	}{{a, "1"}, {a, "2"}, {c, "1"}, {a, "3"}, {c, "2"}} {
		if got := texts(want.who.call(t, "mcp__ctr__count", `{}`)); len(got) != 1 || got[0] != want.text {
			t.Errorf("call %d: %q, want %q", i, got, want.text)
		}
	}
	if n := open.Load(); n != 3 {
		t.Errorf("%d backend connections, want the entry's own and one per session", n)
	}
	a.session.Close()
	waitFor(t, "A's instance to end with its session", func() bool { return open.Load() == 2 })

	for range mcpclient.MaxSessionInstances - 1 { // the sessions stay open until the test ends
		connectInMemory(t, g).call(t, "mcp__ctr__count", `{}`)
	}
	over := connectInMemory(t, g)
	res := over.call(t, "mcp__ctr__count", `{}`)
	if got := texts(res); !res.IsError || len(got) != 1 || got[0] != "Error: mcp-client(ctr): 16 client sessions have an instance of this server already, the bridge's limit (share: session)" {
		t.Errorf("a session past the limit: %q (isError %v)", got, res.IsError)
	}
}
