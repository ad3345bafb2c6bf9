package sdkwire

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// capabilityHandler serves srv over Streamable HTTP, adding add to the
// result of every initialize.
func capabilityHandler(srv *mcp.Server, add map[string]json.RawMessage, jsonResponse bool) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: jsonResponse})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if !bytes.Contains(body, []byte(`"initialize"`)) {
			h.ServeHTTP(w, r)
			return
		}
		cw := NewCapabilityWriter(w, add)
		h.ServeHTTP(cw, r)
		if err := cw.Finish(); err != nil {
			panic(err)
		}
	})
}

// Assumption 31: the Streamable HTTP handler writes its answer to an
// initialize POST as one JSON body, or as an event stream whose data line
// is the response, and ends it there; the capabilities CapabilityWriter
// adds reach the client, and the session goes on.
func TestContractHTTPCapabilityAdded(t *testing.T) {
	add := map[string]json.RawMessage{"tasks": json.RawMessage(`{"list":{}}`)}
	for _, jsonResponse := range []bool{false, true} {
		srv := newServer(nil)
		ts := httptest.NewServer(capabilityHandler(srv, add, jsonResponse))
		req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"tasks":{"list":{}}`) || !strings.Contains(string(body), `"serverInfo"`) {
			t.Errorf("JSONResponse %v: %d %q", jsonResponse, resp.StatusCode, body)
		}
		cs, err := newClient(nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatalf("JSONResponse %v: %v", jsonResponse, err)
		}
		if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo"}); err != nil || text(t, res) != "echo" {
			t.Errorf("JSONResponse %v: a call after: %v", jsonResponse, err)
		}
		cs.Close()
		for ss := range srv.Sessions() { // the raw client's
			ss.Close()
		}
		ts.Close()
	}
}
