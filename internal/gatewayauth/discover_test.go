package gatewayauth

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// metadataServer is an authorization server on 127.0.0.1 whose RFC 8414
// metadata says what meta returns for its URL, and whose /certs is a real
// JWKS. Its client reaches it whatever host a URL names, as a DNS answer
// (or a network path) leading there would; certs counts the JWKS served.
func metadataServer(t *testing.T, meta func(base string) (issuer, jwksURI string)) (base string, client *http.Client, certs *atomic.Int32) {
	t.Helper()
	is := mcptest.NewIssuer(t)
	certs = &atomic.Int32{}
	var srv *httptest.Server
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		issuer, jwks := meta(srv.URL)
		json.NewEncoder(w).Encode(map[string]any{"issuer": issuer, "jwks_uri": jwks})
	})
	mux.HandleFunc("/certs", func(w http.ResponseWriter, r *http.Request) {
		certs.Add(1)
		resp, err := http.Get(is.URL() + "/jwks")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		io.Copy(w, resp.Body)
	})
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
	}
	return srv.URL, &http.Client{Transport: tr}, certs
}

// Discovered metadata whose jwks_uri is plain http to a host not this
// one is refused, as a configured jwksUrl is: the gateway would fetch
// the keys it trusts tokens by in plaintext, for anyone on the path to
// replace. It fetched them.
func TestDiscoveredPlainJWKSRefused(t *testing.T) {
	base, client, certs := metadataServer(t, func(base string) (string, string) { return base, "http://idp.example.com/certs" })
	_, err := NewVerifier(t.Context(), Auth{Issuer: base, Audience: "https://mcp.example.com/mcp"}, VerifierOptions{Client: client})
	if err == nil || !containsAll(err.Error(), `"http://idp.example.com/certs"`, "https", "auth.jwksUrl") {
		t.Errorf("NewVerifier: %v; want an error naming the plain jwks_uri and saying it must be https", err)
	}
	if n := certs.Load(); n != 0 {
		t.Errorf("the keys were fetched %d times over plain http", n)
	}
	// A loopback jwks_uri may be http, as a configured one may.
	local, client, _ := metadataServer(t, func(base string) (string, string) { return base, base + "/certs" })
	if _, err := NewVerifier(t.Context(), Auth{Issuer: local, Audience: "https://mcp.example.com/mcp"}, VerifierOptions{Client: client}); err != nil {
		t.Errorf("a loopback http jwks_uri: %v", err)
	}
}

// Plain http is for a host that names this machine only: a DNS name that
// starts like a loopback address (127.attacker.example) resolves
// anywhere, so its keys would be fetched in plaintext over the network.
// It passed as loopback.
func TestHTTPURLLoopbackOnly(t *testing.T) {
	for u, want := range map[string]bool{
		"https://idp.example.com/certs":          true,
		"http://127.0.0.1:8080/certs":            true,
		"http://127.1.2.3/certs":                 true,
		"http://localhost/certs":                 true,
		"http://[::1]:9000/certs":                true,
		"http://127.attacker.example/certs":      false,
		"http://127.0.0.1.attacker.example/cert": false,
		"http://idp.example.com/certs":           false,
		"ftp://127.0.0.1/certs":                  false,
		"https:///certs":                         false,
	} {
		if got := httpURL(u); got != want {
			t.Errorf("httpURL(%q) = %v, want %v", u, got, want)
		}
	}
}

// An issuer is compared exactly, as RFC 8414 §3.3 says and as the iss of
// every token is: an auth.issuer that differs from the metadata's by a
// trailing slash is refused at once, naming both, not applied to refuse
// every token after. It passed discovery.
func TestIssuerComparedExactly(t *testing.T) {
	for _, c := range []struct {
		name       string
		configured func(base string) string
		meta       func(base string) string
	}{
		{"metadata with a slash", func(b string) string { return b }, func(b string) string { return b + "/" }},
		{"config with a slash", func(b string) string { return b + "/" }, func(b string) string { return b }},
	} {
		base, client, _ := metadataServer(t, func(base string) (string, string) { return c.meta(base), base + "/certs" })
		issuer := c.configured(base)
		_, err := NewVerifier(t.Context(), Auth{Issuer: issuer, Audience: "https://mcp.example.com/mcp"}, VerifierOptions{Client: client})
		if err == nil || !containsAll(err.Error(), `"`+c.meta(base)+`"`, `"`+issuer+`"`, "exactly") {
			t.Errorf("%s: %v; want an error naming both issuers and saying to write it exactly", c.name, err)
		}
	}
}

// gatedJWKS holds the second JWKS fetch (the first refresh) until
// release is closed, telling started when it begins; it then sends the
// fetch on with the request's context as it is by then.
type gatedJWKS struct {
	base             http.RoundTripper
	fetches          atomic.Int32
	started, release chan struct{}
}

func (g *gatedJWKS) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == "/jwks" && g.fetches.Add(1) == 2 {
		close(g.started)
		<-g.release
	}
	return g.base.RoundTrip(r)
}

// A request with an unknown kid whose client goes away while the JWKS is
// refreshed for it does not waste the refresh: it completes, and the key
// it brought is there for the next token. The refresh ran under the
// request's context, so a caller could spend every refresh the limiter
// allows on fetches it cancelled, and a rotated key stayed refused until
// the hourly refresh.
func TestCancelledRequestCompletesItsRefresh(t *testing.T) {
	is := mcptest.NewIssuer(t)
	gate := &gatedJWKS{base: http.DefaultTransport, started: make(chan struct{}), release: make(chan struct{})}
	aud := "https://mcp.example.com/mcp"
	v, err := NewVerifier(t.Context(), Auth{Issuer: is.URL(), Audience: aud}, VerifierOptions{
		Client: &http.Client{Transport: gate}, RefreshUnknownKID: rate.NewLimiter(rate.Every(time.Hour), 1)})
	if err != nil {
		t.Fatal(err)
	}
	rotated := is.Rotate(t)
	claims := is.Claims("alice", aud, nil)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := v.Verify(ctx, "Bearer "+mcptest.SignJWT(t, jwt.SigningMethodRS256, rotated, "made-up", claims))
		done <- err
	}()
	<-gate.started
	cancel() // the client is gone
	close(gate.release)
	if err := <-done; err == nil {
		t.Fatal("a made-up kid was accepted")
	}
	if _, err := v.Verify(t.Context(), "Bearer "+mcptest.SignJWT(t, jwt.SigningMethodRS256, rotated, "rsa2", claims)); err != nil {
		t.Errorf("a token of the rotated key, after the refresh its cancelled request began: %v", err)
	}
}

// Discovery tries RFC 8414 (path inserted), then OpenID Connect (path
// inserted, then appended), going on past a 4xx only; each failure says
// which URL and what it held.
func TestDiscoveryOrderAndFailures(t *testing.T) {
	type answer struct {
		status int
		body   string
	}
	for _, c := range []struct {
		name, path string
		answers    map[string]answer // by path; absent: 404
		want       string            // the jwks_uri, or what the error says
		ok         bool
	}{
		{"oidc with the path appended", "/realms/a", map[string]answer{
			"/realms/a/.well-known/openid-configuration": {200, `{"issuer":"ISSUER","jwks_uri":"https://idp.example.com/certs"}`}},
			"https://idp.example.com/certs", true},
		{"oidc with the path inserted, first", "/realms/a", map[string]answer{
			"/.well-known/openid-configuration/realms/a": {200, `{"issuer":"ISSUER","jwks_uri":"https://idp.example.com/inserted"}`},
			"/realms/a/.well-known/openid-configuration": {200, `{"issuer":"ISSUER","jwks_uri":"https://idp.example.com/appended"}`}},
			"https://idp.example.com/inserted", true},
		{"none found", "", nil, "no metadata found at", false},
		{"a server error stops it", "", map[string]answer{"/.well-known/oauth-authorization-server": {503, "down"}}, "HTTP 503", false},
		{"no jwks_uri", "", map[string]answer{"/.well-known/oauth-authorization-server": {200, `{"issuer":"ISSUER"}`}}, "no jwks_uri", false},
		{"not JSON", "", map[string]answer{"/.well-known/oauth-authorization-server": {200, `<html>`}}, "decoding the metadata", false},
	} {
		var base string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			a, ok := c.answers[r.URL.Path]
			if !ok {
				http.NotFound(w, r)
				return
			}
			w.WriteHeader(a.status)
			io.WriteString(w, strings.ReplaceAll(a.body, "ISSUER", base+c.path))
		}))
		base = srv.URL
		got, err := discoverJWKS(t.Context(), base+c.path, srv.Client())
		srv.Close()
		if c.ok && (err != nil || got != c.want) || !c.ok && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %q, %v; want %q", c.name, got, err, c.want)
		}
	}
	if _, err := discoverJWKS(t.Context(), "http://127.0.0.1:1", http.DefaultClient); err == nil {
		t.Error("an issuer that does not answer: no error")
	}
	if _, err := discoverJWKS(t.Context(), "http://[::1", http.DefaultClient); err == nil {
		t.Error("an issuer that is no URL: no error")
	}
}
