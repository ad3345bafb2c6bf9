package gatewayauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// issuer is a real OAuth authorization server on 127.0.0.1, as far as a
// resource server sees one: RFC 8414 metadata, a JWKS with an RS256 and
// an ES256 key, and tokens it signs. It can go down and rotate keys.
type issuer struct {
	srv     *httptest.Server
	rsa     *rsa.PrivateKey
	ec      *ecdsa.PrivateKey
	down    atomic.Bool
	fetches atomic.Int32

	mu    sync.Mutex
	extra *rsa.PrivateKey // a key published once rotated in
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	is := &issuer{}
	var err error
	if is.rsa, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		t.Fatal(err)
	}
	if is.ec, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": is.URL(), "jwks_uri": is.URL() + "/jwks", "token_endpoint": is.URL() + "/token"})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		if is.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		is.fetches.Add(1)
		json.NewEncoder(w).Encode(is.jwks())
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

func (is *issuer) URL() string { return is.srv.URL }

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func rsaJWK(k *rsa.PublicKey, kid string) map[string]any {
	return map[string]any{"kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig", "n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}
}

func (is *issuer) jwks() map[string]any {
	x, y := make([]byte, 32), make([]byte, 32)
	is.ec.X.FillBytes(x)
	is.ec.Y.FillBytes(y)
	keys := []any{
		rsaJWK(&is.rsa.PublicKey, "rsa1"),
		map[string]any{"kty": "EC", "kid": "ec1", "alg": "ES256", "use": "sig", "crv": "P-256", "x": b64(x), "y": b64(y)},
	}
	is.mu.Lock()
	if is.extra != nil {
		keys = append(keys, rsaJWK(&is.extra.PublicKey, "rsa2"))
	}
	is.mu.Unlock()
	return map[string]any{"keys": keys}
}

// rotate publishes a new RSA key, kid rsa2, and returns it.
func (is *issuer) rotate(t *testing.T) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is.mu.Lock()
	is.extra = k
	is.mu.Unlock()
	return k
}

// claims are a valid token's claims for sub, for the audience aud.
func (is *issuer) claims(sub, aud string, extra jwt.MapClaims) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{"iss": is.URL(), "aud": aud, "sub": sub, "iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	for k, v := range extra {
		c[k] = v
	}
	return c
}

// sign signs claims with the RSA key (RS256, kid rsa1).
func (is *issuer) sign(t *testing.T, c jwt.MapClaims) string {
	return signWith(t, jwt.SigningMethodRS256, is.rsa, "rsa1", c)
}

// signEC signs claims with the EC key (ES256, kid ec1).
func (is *issuer) signEC(t *testing.T, c jwt.MapClaims) string {
	return signWith(t, jwt.SigningMethodES256, is.ec, "ec1", c)
}

func signWith(t *testing.T, m jwt.SigningMethod, key any, kid string, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
