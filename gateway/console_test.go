package gateway

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpbridge/mcpbridge/tool"
)

// Options.Console is served at /console and under it without the bearer
// token (it signs its viewers in itself), but after the Origin check;
// every other path still needs the token, and /consolex is not the
// console's.
func TestConsoleMount(t *testing.T) {
	console := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("console " + r.URL.Path)) })
	g := newGateway(t, tool.NewRegistry(), Options{BearerToken: "s3cret", Console: console})
	srv := httptest.NewServer(g.Handler())
	defer srv.Close()
	for _, tc := range []struct {
		path, origin string
		want         int
	}{
		{"/console", "", http.StatusOK},
		{"/console/tools/x", "", http.StatusOK},
		{"/console/login", "http://127.0.0.1:1", http.StatusOK},
		{"/console/login", "https://evil.example", http.StatusForbidden},
		{"/consolex", "", http.StatusUnauthorized},
		{"/healthz", "", http.StatusUnauthorized},
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+tc.path, nil)
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("GET %s (Origin %q): %s, want %d", tc.path, tc.origin, resp.Status, tc.want)
		}
	}
}
