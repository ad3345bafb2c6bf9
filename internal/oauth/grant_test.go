package oauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
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
