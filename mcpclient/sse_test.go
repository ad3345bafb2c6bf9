package mcpclient

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
)

// The legacy HTTP+SSE transport (protocol 2024-11-05) against the go-sdk's
// own SSE server: discovery, calls, headers on every request (the GET
// stream and each POST), and the same supervision as Streamable HTTP: a
// dropped stream is a lost connection, reconnected with a new session.
func TestSSE(t *testing.T) {
	srv := mcppeer.Fixture(mcppeer.FixtureOptions{})
	var mu sync.Mutex
	var auth []string
	sse := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Method+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		sse.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	cfg := Config{ServerName: "legacy", Transport: TransportSSE, URL: ts.URL + "/sse",
		Headers: map[string]string{"Authorization": "Bearer sse-token"}, Reconnect: fastReconnect(100)}
	h := mustStart(t, cfg, Options{})
	if got := h.call("mcp__legacy__greet", `{"name":"old"}`).Text(); got != "Hello, old!" {
		t.Errorf("greet = %q", got)
	}
	if st := h.srv.Status(); st.Transport != "sse" || st.State != StateReady {
		t.Errorf("status = %+v", st)
	}
	ts.CloseClientConnections() // the GET stream ends: the session is gone
	waitFor(t, "the reconnect", func() bool { return h.log.HasRecord(slog.LevelInfo, msgReconnected) })
	if got := h.call("mcp__legacy__greet", `{"name":"again"}`).Text(); got != "Hello, again!" {
		t.Errorf("greet after reconnect = %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	seen := map[string]bool{}
	for _, a := range auth {
		method, token, _ := strings.Cut(a, " ")
		seen[method] = true
		if token != "Bearer sse-token" {
			t.Errorf("%s without the header: %q", method, token)
		}
	}
	if !seen["GET"] || !seen["POST"] {
		t.Errorf("requests seen: %v", auth)
	}
}
