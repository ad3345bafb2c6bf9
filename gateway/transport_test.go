package gateway

import (
	"context"
	"io"
	"net/http"
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
