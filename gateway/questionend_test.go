package gateway

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/tool"
)

// questionBound is how long a question may take to end once its client
// left: far below the 60 s tool-call timeout it used to wait for.
const questionBound = 10 * time.Second

// A real backend's question during a call of a 2025-11-25 HTTP session
// reaches the client on that call's own stream (no GET stream is open to
// carry it), and a DELETE while it waits for the answer ends it at once:
// the backend's question fails (no one declined it in the client's
// name), the call's stream ends, and no call or slot is left.
func TestDeleteEndsPendingBackendQuestion(t *testing.T) {
	reg := tool.NewRegistry()
	questionEnded := startConfirmBackend(t, reg, "2025-11-25")
	g := newGateway(t, reg, Options{})
	base := serveHTTP(t, g, Options{})
	s := openHTTPSessionWith(t, base, `{"elicitation":{}}`, "")
	waitFor(t, "the backend's tool listed", func() bool { _, ok := reg.Get("mcp__ask__confirm"); return ok })

	ctx, cancel := context.WithTimeout(context.Background(), questionBound)
	defer cancel()
	call := s.post(ctx, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"mcp__ask__confirm","arguments":{"what":"deploy"}}}`)
	defer call.Body.Close()
	stream := bufio.NewScanner(call.Body)
	asked := false
	for !asked && stream.Scan() {
		asked = strings.Contains(stream.Text(), `"method":"elicitation/create"`)
	}
	if !asked {
		t.Fatalf("the backend's question never reached the call's stream: %v", stream.Err())
	}

	req, _ := http.NewRequest(http.MethodDelete, s.endpoint, nil)
	req.Header.Set("Mcp-Session-Id", s.id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode >= 300 {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	resp.Body.Close()
	select {
	case <-questionEnded:
	case <-time.After(questionBound):
		t.Fatal("the backend's question did not fail once the client left")
	}
	for stream.Scan() {
	}
	waitFor(t, "no call or slot left", func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.inFlight == 0 && g.slotsTaken() == 0
	})
}

// A stdio client that closes its input while a backend's question waits
// for its answer has left: the backend's question fails, it is not
// declined in the client's name.
func TestStdioEOFEndsPendingBackendQuestion(t *testing.T) {
	for range 3 { // the end of input races the call's cancellation
		reg := tool.NewRegistry()
		questionEnded := startConfirmBackend(t, reg, "2025-11-25")
		g := newGateway(t, reg, Options{})
		c := connectRawInit(t, `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"1"}}`, g.ServeStdio)
		waitFor(t, "the backend's tool listed", func() bool { _, ok := reg.Get("mcp__ask__confirm"); return ok })
		c.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"mcp__ask__confirm","arguments":{"what":"deploy"}}}`)
		c.serverRequest("elicitation/create")
		c.w.Close()
		select {
		case <-questionEnded:
		case <-time.After(questionBound):
			t.Fatal("the backend's question did not fail once the client closed its input")
		}
	}
}
