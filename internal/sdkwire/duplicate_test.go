package sdkwire

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/serverwire"
)

// Parity check P8: a stateful session's POST carrying the id of a request
// still in flight is refused before it is served, with 400 and the error
// the gateway writes for it; a batch is refused for any one of its ids.
func TestParityDuplicateIDRefused(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	srv := newServer(nil)
	holdTool(srv, entered, release)
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)}))
	t.Cleanup(ts.Close)
	session := rawInitialize(t, ts.URL, "2025-11-25")
	held := make(chan struct{})
	go func() {
		defer close(held)
		resp := rawSend(t, ts.URL, session, "2025-11-25", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hold"}}`)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
	awaitSignal(t, entered, "the call to reach its handler")
	id, _ := jsonrpc.MakeID(float64(7))
	want, err := serverwire.ResponseJSON(id, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "duplicate in-flight request ID 7"})
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`,
		`[{"jsonrpc":"2.0","id":8,"method":"ping"},{"jsonrpc":"2.0","id":7,"method":"ping"}]`,
	} {
		version := "2025-11-25"
		if body[0] == '[' {
			version = "2025-03-26" // the last version with batches
		}
		resp := rawSend(t, ts.URL, session, version, body)
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/json" || string(got) != string(want) {
			t.Errorf("POST %s with 7 in flight: %s %q %q, want 400 application/json %s", body, resp.Status, resp.Header.Get("Content-Type"), got, want)
		}
	}
	close(release)
	<-held
}
