package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

func TestConfigCheck(t *testing.T) {
	idp := &IdP{Issuer: "https://idp.example", ClientID: "i", IDToken: "t"}
	for _, tc := range []struct {
		name string
		cfg  Config
		want []string // "key: message prefix"
	}{
		{"empty", Config{}, nil},
		{"pre-registered", Config{ClientID: "c", ClientSecret: "s", Scopes: []string{"a", "b"}}, nil},
		{"bad grant", Config{Grant: "implicit"}, []string{"grant: must be one of authorization_code, client_credentials, cross_app_access, jwt_bearer"}},
		{"cimd", Config{ClientMetadataURL: "http://x.example/c.json"}, []string{"clientMetadataUrl: must be an https:// URL with a path"}},
		{"cimd root", Config{ClientMetadataURL: "https://x.example/"}, []string{"clientMetadataUrl: must be an https:// URL with a path"}},
		{"port", Config{CallbackPort: 70000}, []string{"callbackPort: must be a port number"}},
		{"scope", Config{Scopes: []string{"a b", ""}}, []string{"scopes[0]: a scope must be", "scopes[1]: a scope must be"}},
		{"key outside cc", Config{PrivateKeyFile: "k.pem", SigningAlgorithm: "ES256"}, []string{"privateKeyFile: is only valid with grant: client_credentials", "signingAlgorithm: is only valid with grant: client_credentials"}},
		{"alg", Config{Grant: GrantClientCredentials, ClientID: "c", PrivateKeyFile: "k", SigningAlgorithm: "HS256"}, []string{"signingAlgorithm: must be one of"}},
		{"cc bare", Config{Grant: GrantClientCredentials}, []string{"clientId: is required with grant: client_credentials", "grant: client_credentials needs exactly one of clientSecret and privateKeyFile"}},
		{"cc both", Config{Grant: GrantClientCredentials, ClientID: "c", ClientSecret: "s", PrivateKeyFile: "k"}, []string{"grant: client_credentials needs exactly one"}},
		{"cc ok", Config{Grant: GrantClientCredentials, ClientID: "c", PrivateKeyFile: "k", SigningAlgorithm: "ES256"}, nil},
		{"idp outside xaa", Config{IdP: idp}, []string{"idp: is only valid with grant: cross_app_access"}},
		{"xaa bare", Config{Grant: GrantCrossAppAccess}, []string{"clientId: is required with grant: cross_app_access", "idp: is required with grant: cross_app_access"}},
		{"xaa idp", Config{Grant: GrantCrossAppAccess, ClientID: "c", IdP: &IdP{TokenEndpoint: "ftp://x"}}, []string{"idp.clientId: is required", "idp.idToken: is required", "idp.tokenEndpoint: must be an absolute"}},
		{"xaa none", Config{Grant: GrantCrossAppAccess, ClientID: "c", IdP: &IdP{}}, []string{"idp: needs issuer or tokenEndpoint", "idp.clientId: is required", "idp.idToken: is required"}},
		{"xaa ok", Config{Grant: GrantCrossAppAccess, ClientID: "c", IdP: idp}, nil},
		// The ID token and the IdP's client secret go there: in clear only
		// to this machine.
		{"xaa http idp", Config{Grant: GrantCrossAppAccess, ClientID: "c", IdP: &IdP{Issuer: "http://idp.example", TokenEndpoint: "http://idp.example/token", ClientID: "i", IDToken: "t"}},
			[]string{"idp.issuer: must be https:// (http:// only to this machine)", "idp.tokenEndpoint: must be https:// (http:// only to this machine)"}},
		{"xaa loopback idp", Config{Grant: GrantCrossAppAccess, ClientID: "c", IdP: &IdP{TokenEndpoint: "http://127.0.0.1:9/token", ClientID: "i", IDToken: "t"}}, nil},
		{"wif bare", Config{Grant: GrantJWTBearer}, []string{"grant: jwt_bearer needs exactly one of assertionFile and assertionEnv"}},
		{"wif both", Config{Grant: GrantJWTBearer, AssertionFile: "/t", AssertionEnv: "T"}, []string{"grant: jwt_bearer needs exactly one"}},
		{"wif env name", Config{Grant: GrantJWTBearer, AssertionEnv: "$TOKEN"}, []string{"assertionEnv: must be the name of an environment variable"}},
		{"wif with a key", Config{Grant: GrantJWTBearer, AssertionEnv: "T", PrivateKeyFile: "k"}, []string{"privateKeyFile: is only valid with grant: client_credentials"}},
		{"assertion outside wif", Config{AssertionFile: "/t", AssertionEnv: "T"}, []string{"assertionFile: is only valid with grant: jwt_bearer", "assertionEnv: is only valid with grant: jwt_bearer"}},
		{"assertion with cc", Config{Grant: GrantClientCredentials, ClientID: "c", ClientSecret: "s", AssertionFile: "/t"}, []string{"assertionFile: is only valid with grant: jwt_bearer"}},
		{"wif ok", Config{Grant: GrantJWTBearer, ClientID: "w", AssertionFile: "/var/run/secrets/tokens/mcp", DPoP: true}, nil},
		{"dpop with any grant", Config{Grant: GrantClientCredentials, ClientID: "c", ClientSecret: "s", DPoP: true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			tc.cfg.Check(func(msg, key string) { got = append(got, key+": "+msg) })
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("problem %d: %q, want it to start with %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestKeys(t *testing.T) {
	if diff := cmp.Diff([]string{"issuer", "tokenEndpoint", "clientId", "clientSecret", "idToken"}, IdPKeys()); diff != "" {
		t.Error(diff)
	}
	if len(Keys()) != 13 || Keys()[0] != "issuer" {
		t.Errorf("Keys: %v", Keys())
	}
}

// The headless fetcher takes the code from a redirect and refuses what
// would need a person or what the server refused.
func TestHeadlessFetcher(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1/callback?code=c1&state=s1&iss=https%3A%2F%2Fas", http.StatusFound)
	})
	mux.HandleFunc("/person", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<form>")) })
	mux.HandleFunc("/denied", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1/callback?error=access_denied&error_description=no", http.StatusFound)
	})
	mux.HandleFunc("/nocode", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1/callback?state=s", http.StatusFound)
	})
	mux.HandleFunc("/otherstate", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1/callback?code=c1&state=s2", http.StatusFound)
	})
	ts := httptest.NewServer(mux)
	defer ts.Close()
	fetch := headlessFetcher(ts.Client())
	res, err := fetch(context.Background(), &auth.AuthorizationArgs{URL: ts.URL + "/ok?state=s1"})
	if err != nil || *res != (auth.AuthorizationResult{Code: "c1", State: "s1", Iss: "https://as"}) {
		t.Errorf("ok: %+v, %v", res, err)
	}
	for path, want := range map[string]string{
		"/person": "answered 200 OK instead of redirecting with a code; it needs a person: use mcpbridge login",
		"/denied": "the authorization server refused: access_denied (no)",
		"/nocode": "the authorization response carries no code",
		// The code of another authorization is not taken for this one's.
		"/otherstate": "redirected with a state that is not the one this authorization sent: nothing was authorized",
	} {
		if _, err := fetch(context.Background(), &auth.AuthorizationArgs{URL: ts.URL + path + "?state=s1"}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
	if _, err := fetch(context.Background(), &auth.AuthorizationArgs{URL: "http://127.0.0.1:1/x"}); err == nil {
		t.Error("an unreachable server succeeded")
	}
}

func TestLoadSigningKey(t *testing.T) {
	dir := t.TempDir()
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalPKCS8PrivateKey(ec)
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ecFile := write("ec.pem", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER}))
	rsaFile := write("rsa.pem", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rk)}))
	junk := write("junk.pem", []byte("not a key"))
	for _, tc := range []struct{ file, alg, wantAlg, wantErr string }{
		{ecFile, "", "ES256", ""},
		{rsaFile, "", "RS256", ""},
		{rsaFile, "PS256", "PS256", ""},
		{ecFile, "RS256", "", "does not fit signingAlgorithm RS256"},
		{rsaFile, "ES256", "", "does not fit signingAlgorithm ES256"},
		{junk, "", "", "not a PEM EC or RSA private key"},
		{filepath.Join(dir, "missing.pem"), "", "", "privateKeyFile: open"},
	} {
		key, m, err := loadSigningKey(tc.file, tc.alg)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s %s: %v, want %q", filepath.Base(tc.file), tc.alg, err, tc.wantErr)
			}
			continue
		}
		if err != nil || m.Alg() != tc.wantAlg {
			t.Fatalf("%s %s: %v %v", filepath.Base(tc.file), tc.alg, m, err)
		}
		if _, err := signAssertion("c", "https://as", key, m); err != nil {
			t.Errorf("signing with %s: %v", tc.wantAlg, err)
		}
	}
}
