package oauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// Client credentials need no person: with a secret (the go-sdk's grant)
// and with a private_key_jwt assertion (ours).
func TestClientCredentials(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	keyFile := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, mcptest.OAuthOptions{ClientID: "svc", ClientSecret: "s3cret", ClientKey: &key.PublicKey})
	for _, cfg := range []*Config{
		{Grant: GrantClientCredentials, ClientID: "svc", ClientSecret: "s3cret"},
		{Grant: GrantClientCredentials, ClientID: "svc", PrivateKeyFile: keyFile},
	} {
		if err := connect(t, srv, cfg, Options{}); err != nil {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
	for _, cfg := range []*Config{
		{Grant: GrantClientCredentials, ClientID: "svc", ClientSecret: "wrong"},
		{Grant: GrantClientCredentials, ClientID: "other", PrivateKeyFile: keyFile},
	} {
		if err := connect(t, srv, cfg, Options{}); err == nil || !strings.Contains(err.Error(), "client_credentials") {
			t.Errorf("%+v: %v, want a refused client_credentials grant", cfg, err)
		}
	}
	if srv.Authorizations() != 0 || srv.Registrations() != 0 {
		t.Error("client credentials went through a login or a registration")
	}
	if _, err := NewHandler(&Config{Grant: GrantClientCredentials, ClientID: "svc", PrivateKeyFile: filepath.Join(t.TempDir(), "none")}, Target{}, Options{}); err == nil {
		t.Error("NewHandler with a missing key file succeeded")
	}
}

// Cross-app access: the ID token exchanged at the IdP (found from its
// issuer, or at the configured endpoint) for an ID-JAG, spent with the
// client's credentials in HTTP Basic.
func TestCrossAppAccess(t *testing.T) {
	srv := newServer(t, mcptest.OAuthOptions{ClientID: "app", ClientSecret: "s", IDToken: "id-token"})
	idp := srv.Issuer + "/idp"
	for _, p := range []*IdP{
		{Issuer: idp, ClientID: "idp-app", IDToken: "id-token"},
		{TokenEndpoint: idp + "/token", ClientID: "idp-app", ClientSecret: "x", IDToken: "id-token"},
	} {
		if err := connect(t, srv, &Config{Grant: GrantCrossAppAccess, ClientID: "app", ClientSecret: "s", IdP: p}, Options{}); err != nil {
			t.Errorf("%+v: %v", p, err)
		}
	}
	for _, tc := range []struct {
		idp  *IdP
		want string
	}{
		{&IdP{Issuer: idp, ClientID: "idp-app", IDToken: "forged"}, "exchanging the ID token at the IdP"},
		{&IdP{Issuer: srv.Issuer + "/nowhere", ClientID: "idp-app", IDToken: "id-token"}, "discovering the IdP's token endpoint"},
	} {
		err := connect(t, srv, &Config{Grant: GrantCrossAppAccess, ClientID: "app", ClientSecret: "s", IdP: tc.idp}, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.idp, err, tc.want)
		}
	}
	if err := connect(t, srv, &Config{Grant: GrantCrossAppAccess, ClientID: "app", ClientSecret: "wrong", IdP: &IdP{Issuer: idp, ClientID: "i", IDToken: "id-token"}}, Options{}); err == nil || !strings.Contains(err.Error(), "spending the ID-JAG") {
		t.Errorf("wrong client secret: %v", err)
	}
}

// With oauth.issuer the credentials go to that authorization server
// only: an MCP server whose metadata names another (here its own) gets
// no client secret and no workload JWT sent there, and the error names
// both. Without it, the one the MCP server names is taken (README).
func TestIssuerPinned(t *testing.T) {
	trusted := newServer(t, mcptest.OAuthOptions{ClientID: "svc", ClientSecret: "s3cret"})
	other := newServer(t, mcptest.OAuthOptions{ClientID: "svc", ClientSecret: "s3cret"})
	var sentToOther atomic.Int32
	recorder := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodPost && strings.HasPrefix(r.URL.String(), other.Issuer) {
			sentToOther.Add(1)
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	jwt := filepath.Join(t.TempDir(), "jwt")
	if err := os.WriteFile(jwt, []byte("workload.jwt.value"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []*Config{
		{Grant: GrantClientCredentials, ClientID: "svc", ClientSecret: "s3cret", Issuer: trusted.Issuer},
		{Grant: GrantJWTBearer, AssertionFile: jwt, Issuer: trusted.Issuer + "/"},
	} {
		err := connect(t, other, cfg, Options{HTTPClient: recorder})
		want := "the MCP server names the authorization server " + other.Issuer + ", not oauth.issuer " + cfg.Issuer + ": no credential was sent"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s to an MCP server naming another authorization server: %v, want %q", cfg.Grant, err, want)
		}
	}
	if n := sentToOther.Load(); n != 0 {
		t.Errorf("%d requests were sent to the authorization server the MCP server named", n)
	}
	if err := connect(t, trusted, &Config{Grant: GrantClientCredentials, ClientID: "svc", ClientSecret: "s3cret", Issuer: trusted.Issuer + "/"}, Options{}); err != nil {
		t.Errorf("client_credentials at the pinned authorization server: %v", err)
	}
	var problems []string
	(&Config{Issuer: "http://as.example.com"}).Check(func(msg, key string) { problems = append(problems, key+": "+msg) })
	if len(problems) != 1 || !strings.HasPrefix(problems[0], "issuer: is http:// to another machine") {
		t.Errorf("an http issuer to another machine: %q", problems)
	}
}
