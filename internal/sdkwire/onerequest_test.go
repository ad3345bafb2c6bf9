//lint:file-ignore SA1019 MCP 2026-07-28 deprecates logging and roots (SEP-2577) but keeps them working for at least a year; a stateless session before 2026-07-28 still logs and refuses roots.

package sdkwire

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/serverwire"
)

// Parity check P5: over stateful Streamable HTTP a POST without a session
// that does not initialize is served on a session with an id and no
// initialize params, closed once its request ends; an initialized
// session is not taken for one.
func TestParityOneRequestSession(t *testing.T) {
	srv := newServer(nil)
	var mu sync.Mutex
	seen := map[string]*mcp.ServerSession{}
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
				mu.Lock()
				seen[method] = ss
				mu.Unlock()
			}
			return next(ctx, method, req)
		}
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer ts.Close()
	resp := rawSend(t, ts.URL, "", "", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}`)
	resp.Body.Close()
	mu.Lock()
	ping := seen["ping"]
	mu.Unlock()
	if ping == nil || !serverwire.OneRequestSession(ping, "ping") {
		t.Fatalf("a session-less ping's session %v is not taken for one of its request (status %d)", ping, resp.StatusCode)
	}
	// Closed as its request's handler returns, which may be just after
	// the response reached the client.
	waitFor(t, "the ping's session to close after its request", func() bool {
		for ss := range srv.Sessions() {
			if ss == ping {
				return false
			}
		}
		return true
	})

	cs, err := newClient(nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.Ping(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	initialized := seen["ping"]
	mu.Unlock()
	if initialized == ping || initialized.ID() == "" || serverwire.OneRequestSession(initialized, "ping") {
		t.Errorf("an initialized session's ping is taken for a one-request session")
	}
}

// logLevels are levels below, at and above OneRequestLogLevel.
var logLevels = []string{"debug", "info", "warning"}

// Parity check P6: over stateless Streamable HTTP, a POST below 2026-07-28
// that carries a call is served on a session made for it alone, with no
// id (whatever Mcp-Session-Id says), initialize params of the POST's
// version (2025-03-26 without the header) and nothing else (no client
// info, no capabilities), log messages sent from OneRequestLogLevel up,
// every request to the client refused ("stateless servers cannot make requests"); its
// response is an SSE stream without a priming event or event ids
// (checked against AppendEvent), and it sets no Mcp-Session-Id.
func TestParityOneRequestStateless(t *testing.T) {
	type seen struct {
		id     string
		params *mcp.InitializeParams
		askErr string
	}
	got := make(chan seen, 1)
	srv := newServer(nil)
	srv.AddTool(&mcp.Tool{Name: "probe", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ss := req.Session
		for _, level := range logLevels {
			ss.Log(ctx, &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(level), Data: level})
		}
		_, err := ss.ListRoots(ctx, nil)
		s := seen{id: ss.ID(), params: ss.InitializeParams()}
		if err != nil {
			s.askErr = err.Error()
		}
		got <- s
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	url := httpServer(t, srv, true)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"probe","arguments":{}}}`
	for _, tt := range []struct{ session, version, want string }{
		{"", "2025-11-25", "2025-11-25"},
		{"", "", "2025-03-26"},
		{"named", "2025-06-18", "2025-06-18"},
	} {
		resp := rawPost(t, url, tt.session, tt.version, call)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		s := <-got
		if p := s.params; s.id != "" || p == nil || p.ProtocolVersion != tt.want || p.ClientInfo != nil || p.Capabilities != nil || p.Meta != nil {
			t.Errorf("%+v: the session has id %q and initialize params %+v, want none and only version %s", tt, s.id, p, tt.want)
		}
		if wantErr := `calling "roots/list": rejected by transport: stateless servers cannot make requests`; s.askErr != wantErr {
			t.Errorf("%+v: ListRoots failed with %q, want %q", tt, s.askErr, wantErr)
		}
		var frames []byte
		for _, level := range logLevels {
			if !serverwire.LogPasses(level, serverwire.OneRequestLogLevel) {
				continue
			}
			note, _ := serverwire.NotificationJSON("notifications/message", &mcp.LoggingMessageParams{Level: mcp.LoggingLevel(level), Data: level})
			frames = serverwire.AppendEvent(frames, "message", "", note)
		}
		id, _ := jsonrpc.MakeID(float64(1))
		result, _ := serverwire.ResponseJSON(id, serverwire.CallResultJSON(false, json.RawMessage(`[{"type":"text","text":"ok"}]`), nil), nil)
		frames = serverwire.AppendEvent(frames, "message", "", result)
		if string(body) != string(frames) {
			t.Errorf("%+v: the response is\n%s\nwant\n%s", tt, body, frames)
		}
		h := http.Header{}
		serverwire.SetResponseHeaders(h, false)
		for key := range h {
			if resp.Header.Get(key) != h.Get(key) {
				t.Errorf("%+v: header %s = %q, want %q", tt, key, resp.Header.Get(key), h.Get(key))
			}
		}
		if v := resp.Header.Get("Mcp-Session-Id"); v != "" {
			t.Errorf("%+v: Mcp-Session-Id %q set", tt, v)
		}
	}
}
