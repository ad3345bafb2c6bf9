//lint:file-ignore SA1019 the test server logs, deprecated as of MCP 2026-07-28 but carried by the bridge.
package mcpclient

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// On 2026-07-28 a request carries the log level it wants in its _meta,
// and logging/setLevel is gone: it is not sent (a stateless server
// refused it at every connect, and the bridge warned that the server's
// level was its own), and a call still gets the server's messages from
// the configured level up.
func TestLogLevelRidesTheRequestOn20260728(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "talker", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "talk"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		for _, level := range []mcp.LoggingLevel{"debug", "info"} {
			if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: level, Data: string(level)}); err != nil {
				return nil, nil, err
			}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "said"}}}, nil, nil
	})
	var mu sync.Mutex
	var methods []string
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		methods = append(methods, r.Header.Get("Mcp-Method"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)

	cfg := Config{ServerName: "web", Transport: TransportStreamableHTTP, URL: hs.URL, ProtocolVersion: "2026-07-28", LogLevel: "info"}
	c := mustStart(t, cfg, Options{})
	if v := c.srv.Status().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s, want 2026-07-28", v)
	}
	var got []string
	ctx := tool.WithLog(context.Background(), func(raw json.RawMessage) {
		var m struct{ Data string }
		json.Unmarshal(raw, &m)
		mu.Lock()
		got = append(got, m.Data)
		mu.Unlock()
	})
	if res, err := c.reg.Execute(ctx, "mcp__web__talk", nil); err != nil || res.Text() != "said" {
		t.Fatalf("talk: %q, %v", res.Text(), err)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, ",") != "info" {
		t.Errorf("the call got log messages %q, want info only", got)
	}
	for _, m := range methods {
		if m == "logging/setLevel" {
			t.Errorf("logging/setLevel was sent on 2026-07-28 (methods %q)", methods)
		}
	}
	if c.log.HasRecord(slog.LevelWarn, "logging/setLevel failed; the server's log level is its own") {
		t.Errorf("warned:\n%s", c.log.Text())
	}
}
