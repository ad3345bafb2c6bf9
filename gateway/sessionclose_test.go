package gateway

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A client that ends its session (DELETE) while a call of its runs: the
// call is cancelled at once, the DELETE answered, and the gateway keeps
// nothing of the session. The DELETE used to wait for the call to end on
// its own (the backend never heard of the cancellation), and the session
// stayed in the gateway's books until the next client initialized.
func TestDeleteEndsTheSessionsCalls(t *testing.T) {
	reg, release, started := blockingTools(t)
	defer close(release)
	g := newGateway(t, reg, Options{})
	base := serveHTTP(t, g, Options{})
	c := connectHTTP(t, base, nil)
	id := c.session.ID()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	called := make(chan error, 1)
	go func() {
		_, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: "block"})
		called <- err
	}()
	waitSignal(t, started, "the blocking call to start")

	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, base+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", id)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("DELETE: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		t.Fatalf("DELETE: status %d", resp.StatusCode)
	}
	// The tool returns only when its context ends (or release closes, at
	// the end of the test): an answer before that is the cancellation.
	t.Logf("DELETE answered in %v with a call in flight", time.Since(start).Round(time.Millisecond))
	waitFor(t, "the session to be forgotten", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		for ss := range g.sessions {
			if ss.ID() == id {
				return false
			}
		}
		return g.byID[id] == nil && g.sessionByID(id) == nil
	})
	<-called // the client's call ends one way or another with its session
}
