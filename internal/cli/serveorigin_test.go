package cli

import (
	"net/http"
	"strings"
	"testing"
)

// serve refuses, before anything starts, an --allow-origin that no
// browser's Origin header can ever match (no scheme, a path, a
// wildcard, a default port browsers leave out, a user), saying the flag,
// the value and the form an origin takes; "*" and "null", which would
// let any web page use the gateway, are refused saying so. The origins
// it accepts are allowed, a trailing slash aside, and no other.
func TestServeAllowOriginChecked(t *testing.T) {
	cfg := writeConfig(t, "[]\n")
	for value, why := range map[string]string{
		"evil.example":                  "scheme://host[:port]",
		"evil.example:3000":             "scheme://host[:port]",
		"//evil.example":                "scheme://host[:port]",
		"https://app.example.com/app":   "no path (/app)",
		"https://app.example.com?x=1":   "scheme://host[:port]",
		"https://*.example.com":         "wildcard",
		"https://app.example.com:443":   "default port out of Origin: write https://app.example.com",
		"http://app.example.com:80":     "default port out of Origin: write http://app.example.com",
		"https://app.example.com:99999": "port 99999 is not a TCP port",
		"https://me@app.example.com":    "scheme://host[:port]",
		"https://":                      "scheme://host[:port]",
		"*":                             "any web page",
		"null":                          "any web page",
	} {
		r := mcpbridge(t, "", "serve", "--http", "127.0.0.1:0", "--config", cfg, "--allow-origin", "https://ok.example", "--allow-origin", value)
		if want := `serve: --allow-origin "` + value + `": `; r.code != ExitUsage || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, why) {
			t.Errorf("--allow-origin %q: exit %d, stderr %q; want 2, %q and %q", value, r.code, r.stderr, want, why)
		}
		if strings.Contains(r.stderr, "serving MCP") {
			t.Errorf("--allow-origin %q: serve started before refusing it", value)
		}
	}

	p := startServing(t, nil, "serve", "--http", "127.0.0.1:0", "--config", cfg,
		"--allow-origin", "https://app.example.com/", "--allow-origin", "HTTP://Tools.Example:8080")
	for origin, want := range map[string]int{
		"https://app.example.com":   http.StatusOK,
		"http://tools.example:8080": http.StatusOK,
		"https://other.example":     http.StatusForbidden,
		"http://app.example.com":    http.StatusForbidden,
	} {
		req, _ := http.NewRequest(http.MethodGet, p.base()+"/livez", nil) // alive, whatever the first start: the Origin decides
		req.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Origin %s: %d, want %d", origin, resp.StatusCode, want)
		}
	}
}
