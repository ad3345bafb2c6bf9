package gateway

import (
	"net/http"
	"testing"

	"github.com/mcpbridge/mcpbridge/tool"
)

// Every origin CheckAllowedOrigin accepts lets in the browser that sends
// it in Origin, as browsers write it (lowercase, without a trailing
// slash), over real HTTP; another origin is still refused.
func TestAcceptedOriginsAllowTheirBrowsers(t *testing.T) {
	allowed := map[string]string{ // as configured → as a browser sends it
		"https://app.example.com/":      "https://app.example.com",
		"HTTPS://App.Example.COM:8443":  "https://app.example.com:8443",
		"http://10.0.0.5:3000":          "http://10.0.0.5:3000",
		"http://[2001:db8::1]:8080":     "http://[2001:db8::1]:8080",
		"chrome-extension://abcdefgh":   "chrome-extension://abcdefgh",
		"https://xn--bcher-kva.example": "https://xn--bcher-kva.example",
	}
	opts := Options{}
	for o := range allowed {
		if err := CheckAllowedOrigin(o); err != nil {
			t.Fatalf("CheckAllowedOrigin(%q): %v", o, err)
		}
		opts.AllowedOrigins = append(opts.AllowedOrigins, o)
	}
	base := serveHTTP(t, newGateway(t, tool.NewRegistry(), opts), opts)
	status := func(origin string) int {
		req, _ := http.NewRequest(http.MethodGet, base+"/healthz", nil)
		req.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for configured, origin := range allowed {
		if got := status(origin); got != http.StatusOK {
			t.Errorf("allowed %q, Origin %s: %d, want 200", configured, origin, got)
		}
	}
	if got := status("https://evil.example"); got != http.StatusForbidden {
		t.Errorf("Origin https://evil.example: %d, want 403", got)
	}
}
