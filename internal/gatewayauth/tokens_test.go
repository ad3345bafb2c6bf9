package gatewayauth

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

const scopedConfig = `
auth:
  issuer: ISSUER
  audience: RESOURCE
  scopes: [mcp:tools]
`

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`

// post sends an initialize with the Authorization value authz ("" for
// none) and returns the status and WWW-Authenticate header.
func (s *served) post(t *testing.T, authz string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.resource(), strings.NewReader(initialize))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}

// Every bad token gets 401 with the resource metadata's URL, as the MCP
// authorization spec requires; a token short of the required scope gets
// 403 insufficient_scope (step-up), and a good one gets in.
func TestBadTokensAre401WithMetadata(t *testing.T) {
	s := newServed(t, Options{})
	s.apply(t, scopedConfig, nil)
	is, aud := s.is, s.resource()
	good := func(extra jwt.MapClaims) jwt.MapClaims {
		c := is.Claims("alice", aud, jwt.MapClaims{"scope": "mcp:tools"})
		for k, v := range extra {
			c[k] = v
			if v == nil {
				delete(c, k)
			}
		}
		return c
	}
	stranger, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := x509.MarshalPKIXPublicKey(&is.RSA.PublicKey)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	now := time.Now()
	meta := fmt.Sprintf(`resource_metadata=%q`, s.srv.URL+"/.well-known/oauth-protected-resource/mcp")
	unauthorized := "Bearer " + meta
	invalid := "Bearer " + meta + `, error="invalid_token"`
	cases := []struct {
		name, authz string
		status      int
		header      string
	}{
		{"no token", "", 401, unauthorized},
		{"not bearer", "Basic YWxpY2U6cHc=", 401, unauthorized},
		{"expired", "Bearer " + is.Sign(t, good(jwt.MapClaims{"exp": now.Add(-time.Hour).Unix()})), 401, invalid},
		{"not yet valid", "Bearer " + is.Sign(t, good(jwt.MapClaims{"nbf": now.Add(time.Hour).Unix()})), 401, invalid},
		{"no exp", "Bearer " + is.Sign(t, good(jwt.MapClaims{"exp": nil})), 401, invalid},
		{"wrong audience", "Bearer " + is.Sign(t, good(jwt.MapClaims{"aud": "https://other.example.com/mcp"})), 401, invalid},
		{"wrong issuer", "Bearer " + is.Sign(t, good(jwt.MapClaims{"iss": "https://evil.example.com"})), 401, invalid},
		{"no subject", "Bearer " + is.Sign(t, good(jwt.MapClaims{"sub": nil})), 401, invalid},
		{"unknown key", "Bearer " + mcptest.SignJWT(t, jwt.SigningMethodRS256, stranger, "rsa9", good(nil)), 401, invalid},
		{"known kid, other key", "Bearer " + mcptest.SignJWT(t, jwt.SigningMethodRS256, stranger, "rsa1", good(nil)), 401, invalid},
		{"alg none", "Bearer " + mcptest.SignJWT(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, "rsa1", good(nil)), 401, invalid},
		{"HMAC with the public key as secret", "Bearer " + mcptest.SignJWT(t, jwt.SigningMethodHS256, pubPEM, "rsa1", good(nil)), 401, invalid},
		{"HMAC without kid", "Bearer " + mcptest.SignJWT(t, jwt.SigningMethodHS256, pubPEM, "", good(nil)), 401, invalid},
		{"malformed", "Bearer not.a.jwt", 401, invalid},
		{"unknown algorithm", "Bearer " + withAlg(is.Sign(t, good(nil)), "RS1024"), 401, invalid},
		{"RS256 token relabelled PS256", "Bearer " + withAlg(is.Sign(t, good(nil)), "PS256"), 401, invalid},
		{"over 16 KiB", "Bearer " + is.Sign(t, good(jwt.MapClaims{"pad": strings.Repeat("x", MaxTokenBytes)})), 401, invalid},
		{"DPoP-bound (cnf.jkt), stolen and sent as bearer", "Bearer " + is.Sign(t, good(jwt.MapClaims{"cnf": map[string]any{"jkt": "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"}})), 401, invalid},
		{"certificate-bound (cnf.x5t#S256)", "Bearer " + is.Sign(t, good(jwt.MapClaims{"cnf": map[string]any{"x5t#S256": "bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2"}})), 401, invalid},
		{"an empty cnf binds nothing", "Bearer " + is.Sign(t, good(jwt.MapClaims{"cnf": map[string]any{}})), 200, ""},
		{"missing scope", "Bearer " + is.Sign(t, good(jwt.MapClaims{"scope": "read"})), 403, "Bearer " + meta + `, error="insufficient_scope", scope="mcp:tools"`},
		{"good RS256", "Bearer " + is.Sign(t, good(nil)), 200, ""},
		{"good ES256", "Bearer " + is.SignEC(t, good(nil)), 200, ""},
		{"expired within the leeway", "Bearer " + is.Sign(t, good(jwt.MapClaims{"exp": now.Add(-Leeway / 2).Unix()})), 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, header := s.post(t, c.authz)
			if status != c.status || header != c.header {
				t.Errorf("got %d %q\nwant %d %q", status, header, c.status, c.header)
			}
		})
	}
}

// withAlg returns tok with its header's alg replaced, signature kept.
func withAlg(tok, alg string) string {
	parts := strings.SplitN(tok, ".", 2)
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"` + alg + `","kid":"rsa1","typ":"JWT"}`))
	return header + "." + parts[1]
}

// Two static tokens of one value are refused, naming both names and
// never the value: the caller sending it would be either identity, a
// different one each start (the tokens are a map). So is a config's token
// named bearer beside serve's --token-env token, whose identity that is
// (it took the config's place), and a config token on --token-env's
// variable.
func TestStaticTokensOfOneValueRefused(t *testing.T) {
	const value = "s3cret-shared-value"
	_, err := NewVerifier(t.Context(), Auth{TokenValues: map[string]string{"ci": value, "admin": value, "ops": "other"}}, VerifierOptions{})
	if err == nil || !containsAll(err.Error(), `"admin" and "ci"`, "same value") || strings.Contains(err.Error(), value) {
		t.Errorf("two names, one value: %v; want an error naming admin and ci, without the value", err)
	}
	s := newServed(t, Options{BearerToken: value})
	for src, env := range map[string]map[string]string{
		"auth: {tokens: {admin: GW_TOKEN}}": {"GW_TOKEN": value},
		"auth: {tokens: {bearer: CI}}":      {"CI": "another-value"},
	} {
		err := s.keeper.Apply(t.Context(), s.config(t, src, env), nil)
		if err == nil || !containsAll(err.Error(), `"bearer"`, "--token-env") || strings.Contains(err.Error(), value) {
			t.Errorf("%s with --token-env: %v; want an error naming bearer as --token-env's, without the value", src, err)
		}
	}
	if s.keeper.Current() != nil {
		t.Error("a refused config was applied")
	}
}

// A token of the issuer whose sub is a static token's name ("ci", or
// "bearer", --token-env's) would be that identity: its policy grants,
// its sessions and tasks, its rate limit and its lines in the audit
// trail; one whose sub is "stdio" would get the grants of serve
// --stdio's local user. An issuer whose users choose their own subject
// (a username) hands that out to whoever signs up under the name, so
// such a token is refused (401 invalid_token), and the static tokens
// still get in.
func TestJWTNamedAsStaticTokenRefused(t *testing.T) {
	s := newServed(t, Options{BearerToken: "serve-token"})
	s.apply(t, "auth: {issuer: ISSUER, audience: RESOURCE, tokens: {ci: CI_TOKEN}}\npolicy:\n  - {subjects: [ci, bearer, stdio], allow: [\"mcp__time__*\"]}\n",
		map[string]string{"CI_TOKEN": "ci-secret-token"})
	for _, sub := range []string{"ci", "bearer", "stdio"} {
		code, challenge := s.post(t, "Bearer "+s.is.Sign(t, s.is.Claims(sub, s.resource(), nil)))
		if code != http.StatusUnauthorized || !strings.Contains(challenge, `error="invalid_token"`) {
			t.Errorf("a JWT whose sub is %q: %d %q, want 401 invalid_token", sub, code, challenge)
		}
	}
	if !strings.Contains(s.logs.String(), `is the name of a static token`) || !strings.Contains(s.logs.String(), `serve --stdio's local user`) {
		t.Errorf("the log does not say why the JWT was refused:\n%s", s.logs.String())
	}
	for _, tok := range []string{"ci-secret-token", "serve-token", s.is.Sign(t, s.is.Claims("alice", s.resource(), nil))} {
		if code, _ := s.post(t, "Bearer "+tok); code != http.StatusOK {
			t.Errorf("token %.12s…: %d, want 200", tok, code)
		}
	}
}
