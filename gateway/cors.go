package gateway

import (
	"net/http"
	"strings"
)

// corsExposed are the response headers a web app's script must read: the
// session id, the version, why it was refused and when to retry.
const corsExposed = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Retry-After"

// corsMethods are those Streamable HTTP uses.
const corsMethods = "GET, POST, DELETE"

// corsPath reports whether path is one a web app calls across origins:
// MCP and the OAuth discovery documents. The console is same-origin only.
func corsPath(path string) bool {
	return path == "/mcp" || strings.HasPrefix(path, "/.well-known/")
}

// cors lets a browser page of an origin --allow-origin lists read the
// answer to r (not a loopback one merely let through: any local web
// server's page could then use an unauthenticated loopback gateway), and
// answers r itself when it is the page's CORS preflight, before any
// authentication: browsers send no credentials with it. A page's fetch
// with Authorization or Mcp-Session-Id is always preflighted, so without
// this no web app could use the gateway, whatever --allow-origin said.
func cors(w http.ResponseWriter, r *http.Request, origin string) (answered bool) {
	if !corsPath(r.URL.Path) {
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		h.Set("Access-Control-Expose-Headers", corsExposed)
		return false
	}
	h.Set("Access-Control-Allow-Methods", corsMethods)
	// The headers the page asks for: its origin is trusted, and a
	// 2026-07-28 client sends an Mcp-Param-* header per tool argument,
	// which no fixed list could name.
	if asked := r.Header.Get("Access-Control-Request-Headers"); asked != "" {
		h.Set("Access-Control-Allow-Headers", asked)
	}
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}
