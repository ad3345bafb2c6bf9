package console

import (
	"crypto/tls"
	"net/http/httptest"
	"testing"
)

// A form is the console's own when its page is the console's host: over
// HTTPS (a proxy in front that ends TLS, or TLS here), or over HTTP to a
// plain listener; never another host, another port, or an http page
// posting to a TLS listener. A sign-in reached over HTTPS gets a Secure
// cookie, behind the proxy too.
func TestSameOriginBehindATLSProxy(t *testing.T) {
	for _, c := range []struct {
		origin, referer string
		tls             bool
		same, secure    bool
	}{
		{origin: "https://mcp.example.com", same: true, secure: true},
		{origin: "http://mcp.example.com", same: true},
		{origin: "https://mcp.example.com", tls: true, same: true, secure: true},
		{origin: "http://mcp.example.com", tls: true, secure: true},
		{origin: "https://evil.example", secure: true},
		{origin: "https://mcp.example.com:8443", secure: true},
		{referer: "https://mcp.example.com/console/tools", same: true, secure: true},
		{origin: "%%", same: false},
	} {
		r := httptest.NewRequest("POST", "http://mcp.example.com/console/login", nil)
		if c.tls {
			r.TLS = &tls.ConnectionState{}
		}
		if c.origin != "" {
			r.Header.Set("Origin", c.origin)
		}
		if c.referer != "" {
			r.Header.Set("Referer", c.referer)
		}
		if got := sameOrigin(r); got != c.same {
			t.Errorf("origin %q referer %q tls %v: same origin %v, want %v", c.origin, c.referer, c.tls, got, c.same)
		}
		if got := overHTTPS(r); got != c.secure {
			t.Errorf("origin %q referer %q tls %v: over HTTPS %v, want %v", c.origin, c.referer, c.tls, got, c.secure)
		}
	}
}
