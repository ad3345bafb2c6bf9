package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/tool"
)

// A web app at an origin --allow-origin lists can use the gateway from a
// browser: its preflight for /mcp is answered (before authentication, as
// browsers send no credentials with it), and the answers to its requests
// name it in Access-Control-Allow-Origin and expose Mcp-Session-Id and
// WWW-Authenticate. Before, the preflight got 401 and no answer carried
// the header, so the browser let the page read none. Another origin still
// gets 403 and no CORS header, the console (same-origin only) none, and
// a loopback page the origin check lets through without its listing none.
func TestAllowedOriginCanCallFromABrowser(t *testing.T) {
	const app = "https://app.example.com"
	console := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("console")) })
	opts := Options{BearerToken: "s3cret", AllowedOrigins: []string{app}, Console: console}
	srv := httptest.NewServer(newGateway(t, tool.NewRegistry(), opts).Handler())
	defer srv.Close()
	send := func(method, path, origin string, header map[string]string, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Origin", origin)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	preflight := map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type, mcp-session-id, mcp-protocol-version"}

	resp := send(http.MethodOptions, "/mcp", app, preflight, "")
	allowed := strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers"))
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != app ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") ||
		!strings.Contains(allowed, "authorization") || !strings.Contains(allowed, "mcp-session-id") {
		t.Errorf("the app's preflight: %d %v, want 204 allowing it POST with its headers", resp.StatusCode, resp.Header)
	}

	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"web","version":"1"}}}`
	mcpHeaders := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	resp = send(http.MethodPost, "/mcp", app, mcpHeaders, init)
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Access-Control-Allow-Origin") != app ||
		!strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "WWW-Authenticate") {
		t.Errorf("the app's POST without its token: %d %v, want 401 the app may read", resp.StatusCode, resp.Header)
	}
	mcpHeaders["Authorization"] = "Bearer s3cret"
	resp = send(http.MethodPost, "/mcp", app, mcpHeaders, init)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != app || resp.Header.Get("Mcp-Session-Id") == "" ||
		!strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") {
		t.Errorf("the app's initialize: %d %v, want 200 with a session id the app may read", resp.StatusCode, resp.Header)
	}

	for _, tc := range []struct{ what, method, path, origin string }{
		{"another origin's preflight", http.MethodOptions, "/mcp", "https://evil.example"},
		{"another origin's POST", http.MethodPost, "/mcp", "https://evil.example"},
		{"the app's request to the console", http.MethodGet, "/console", app},
		{"a loopback page's preflight (let through, not listed)", http.MethodOptions, "/mcp", "http://localhost:3000"},
		{"the app's preflight for the console", http.MethodOptions, "/console/logout", app},
	} {
		if resp := send(tc.method, tc.path, tc.origin, preflight, ""); resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s: answered with Access-Control-Allow-Origin %q, want none", tc.what, resp.Header.Get("Access-Control-Allow-Origin"))
		}
	}
}
