package gateway

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The requests besides a session's POSTs (its GET stream, DELETE, other
// methods) and the refusals of a malformed one are answered as the SDK's
// handler answers them (sdkReference), status and body, whichever serves
// the gateway's endpoint (the SDK's handler, or the gateway's own
// transport).
func TestHTTPEndpointAnswersAsSDK(t *testing.T) {
	g := newGateway(t, takenTools(t), Options{})
	base, ref := serveHTTP(t, g, Options{}), sdkReference(t, g)
	s, sRef := openHTTPSession(t, base), openHTTPSession(t, ref)
	tests := []struct {
		name, method string
		header       map[string]string
	}{
		{name: "a GET without SSE in Accept", method: http.MethodGet, header: map[string]string{"Accept": "application/json"}},
		{name: "a GET without a session", method: http.MethodGet, header: map[string]string{"Accept": "text/event-stream", "Mcp-Session-Id": ""}},
		{name: "a GET of an unknown session", method: http.MethodGet, header: map[string]string{"Accept": "text/event-stream", "Mcp-Session-Id": "nosuch"}},
		{name: "a GET with a malformed Last-Event-ID", method: http.MethodGet, header: map[string]string{"Accept": "text/event-stream", "Last-Event-ID": "a_b_c"}},
		{name: "a resume of a stream never opened", method: http.MethodGet, header: map[string]string{"Accept": "text/event-stream", "Last-Event-ID": "nosuch_3"}},
		{name: "a DELETE without a session", method: http.MethodDelete, header: map[string]string{"Mcp-Session-Id": ""}},
		{name: "a DELETE of an unknown session", method: http.MethodDelete, header: map[string]string{"Mcp-Session-Id": "nosuch"}},
		{name: "a PUT", method: http.MethodPut},
		{name: "an unknown version", method: http.MethodGet, header: map[string]string{"Accept": "text/event-stream", "Mcp-Protocol-Version": "1999-01-01"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, want := request(t, s, tt.method, "", tt.header), request(t, sRef, tt.method, "", tt.header)
			if diff := sameAnswer(got, want); diff != "" {
				t.Errorf("the answer differs from the SDK's handler's (-SDK +gateway):\n%s", diff)
			}
			if got.header.Get("Allow") != want.header.Get("Allow") {
				t.Errorf("Allow %q, the SDK's %q", got.header.Get("Allow"), want.header.Get("Allow"))
			}
		})
	}
}

// request sends a request of method with body ("" for none) on s, with
// the extra headers (an empty value deletes the header), and returns the
// answer.
func request(t *testing.T, s *httpSession, method, body string, header map[string]string) httpAnswer {
	t.Helper()
	req := s.newRequest(context.Background(), method, body)
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return httpAnswer{resp.StatusCode, resp.Header, eventIDs.ReplaceAllString(string(b), "id: STREAM_")}
}

// A 2026-07-28 request on a 2025-11-25 session is refused naming the
// version the request asked for. The SDK's handler names the header's
// version instead ("2025-11-25" is not supported, requested 2025-11-25),
// which tells the client nothing true; the gateway differs on purpose.
func TestPerRequestOnSessionNamesItsVersion(t *testing.T) {
	g := newGateway(t, takenTools(t), Options{})
	s := openHTTPSession(t, serveHTTP(t, g, Options{}))
	got := request(t, s, http.MethodPost, `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		map[string]string{"Mcp-Protocol-Version": "2025-11-25"})
	want := `{"jsonrpc":"2.0","id":3,"error":{"code":-32022,"message":"protocol version \"2026-07-28\" is not supported by this server","data":{"supported":["2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"requested":"2026-07-28"}}}`
	if got.status != http.StatusBadRequest || strings.TrimSpace(got.body) != want {
		t.Errorf("got %d %s\nwant 400 %s", got.status, got.body, want)
	}
}
