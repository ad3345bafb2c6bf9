package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// workloadJWT is a platform's token for the workload: signed by key, for
// audience, expiring at exp.
func workloadJWT(t *testing.T, key *ecdsa.PrivateKey, audience string, exp time.Time) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.RegisteredClaims{
		Issuer: "https://k8s.example.test", Subject: "system:serviceaccount:ns:bridge", Audience: jwt.ClaimStrings{audience},
		ExpiresAt: jwt.NewNumericDate(exp), IssuedAt: jwt.NewNumericDate(time.Now()), ID: rand.Text(),
	}).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The workload's JWT is read from its file for every token request: the
// platform rotating the file in place (as Kubernetes does a projected
// token) is picked up by the next token request of the same connection.
func TestJWTBearerFileRotates(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	// Tokens that expire at once: every request asks for a new one.
	srv := newServer(t, mcptest.OAuthOptions{WorkloadKey: &key.PublicKey, ExpiresIn: 1})
	file := filepath.Join(t.TempDir(), "token")
	first := workloadJWT(t, key, srv.Issuer, time.Now().Add(time.Hour))
	if err := os.WriteFile(file, []byte(first+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(&Config{Grant: GrantJWTBearer, AssertionFile: file}, Target{ServerName: "srv", URL: srv.URL}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "wif-test", Version: "0"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: srv.URL, OAuthHandler: h, HTTPClient: &http.Client{Transport: Transport(h, nil)}}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	second := workloadJWT(t, key, srv.Issuer, time.Now().Add(time.Hour))
	// A rename, as the kubelet swaps its ..data link.
	if err := os.WriteFile(file+".new", []byte(second), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(file+".new", file); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}}); err != nil {
		t.Fatalf("call after the rotation: %v", err)
	}
	got := srv.WorkloadAssertions()
	if len(got) < 2 || got[0] != first || got[len(got)-1] != second {
		t.Errorf("assertions given: %d, first is the file's first %v, last is the rotated one %v", len(got), len(got) > 0 && got[0] == first, len(got) > 0 && got[len(got)-1] == second)
	}
	if srv.Authorizations() != 0 || srv.Registrations() != 0 {
		t.Error("a workload went through a login or a registration")
	}
}

// From an environment variable; with DPoP the grant's token is bound too.
func TestJWTBearerEnvWithDPoP(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srv := newServer(t, mcptest.OAuthOptions{WorkloadKey: &key.PublicKey, DPoP: true})
	env := map[string]string{"MCP_TOKEN": workloadJWT(t, key, srv.Issuer, time.Now().Add(time.Hour))}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cfg := &Config{Grant: GrantJWTBearer, AssertionEnv: "MCP_TOKEN", ClientID: "workload"}
	if err := connect(t, srv, cfg, Options{LookupEnv: lookup}); err != nil {
		t.Fatalf("connect: %v", err)
	}
	if srv.DPoPProofs() == 0 || len(srv.DPoPRefusals()) != 0 {
		t.Errorf("%d requests on proofs, refusals %q", srv.DPoPProofs(), srv.DPoPRefusals())
	}
}

// A refused or missing assertion is reported with where it came from,
// after one token request at most: no retry, and no login instead.
func TestJWTBearerRefused(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srv := newServer(t, mcptest.OAuthOptions{WorkloadKey: &key.PublicKey})
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	noEnv := func(string) (string, bool) { return "", false }
	for _, tc := range []struct {
		name     string
		cfg      *Config
		want     string
		requests int
	}{
		{"expired", &Config{AssertionFile: write("expired", workloadJWT(t, key, srv.Issuer, time.Now().Add(-time.Minute)))}, "refused the workload's JWT", 1},
		{"another audience", &Config{AssertionFile: write("aud", workloadJWT(t, key, "https://elsewhere.example", time.Now().Add(time.Hour)))}, "refused the workload's JWT", 1},
		{"another signer", &Config{AssertionFile: write("forged", workloadJWT(t, other, srv.Issuer, time.Now().Add(time.Hour)))}, "refused the workload's JWT", 1},
		{"empty file", &Config{AssertionFile: write("empty", "\n")}, "oauth.assertionFile " + filepath.Join(dir, "empty") + " is empty", 0},
		{"missing file", &Config{AssertionFile: filepath.Join(dir, "none")}, "oauth.assertionFile: open " + filepath.Join(dir, "none"), 0},
		{"unset variable", &Config{AssertionEnv: "MCP_TOKEN"}, "oauth.assertionEnv: $MCP_TOKEN is not set or empty", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(srv.WorkloadAssertions())
			tc.cfg.Grant = GrantJWTBearer
			err := connect(t, srv, tc.cfg, Options{Mode: ModeHeadless, LookupEnv: noEnv})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("connect: %v, want %q", err, tc.want)
			}
			if n := len(srv.WorkloadAssertions()) - before; n != tc.requests {
				t.Errorf("%d token requests, want %d", n, tc.requests)
			}
		})
	}
	if srv.Authorizations() != 0 || srv.Registrations() != 0 {
		t.Error("a refused workload fell back to a login")
	}
}
