package sdkwire

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Assumption 36: over stateful Streamable HTTP a POST without a session
// that does not initialize is served on a session with an id and no
// initialize params, closed once its request ends; an initialized
// session is not taken for one.
func TestContractOneRequestSession(t *testing.T) {
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
	req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mu.Lock()
	ping := seen["ping"]
	mu.Unlock()
	if ping == nil || !OneRequestSession(ping, "ping") {
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
	if initialized == ping || initialized.ID() == "" || OneRequestSession(initialized, "ping") {
		t.Errorf("an initialized session's ping is taken for a one-request session")
	}
}
