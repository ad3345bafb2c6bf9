package mcptest

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

// Issuer is a real OAuth authorization server on 127.0.0.1, as far as a
// resource server sees one: RFC 8414 metadata, a JWKS with an RS256 key
// (kid rsa1) and an ES256 key (kid ec1), and the tokens it signs. It can
// go down (Down) and rotate keys in (Rotate).
type Issuer struct {
	srv *httptest.Server
	// RSA and EC are the signing keys.
	RSA *rsa.PrivateKey
	EC  *ecdsa.PrivateKey
	// Down makes the JWKS endpoint answer 503.
	Down atomic.Bool
	// Fetches counts the JWKS served.
	Fetches atomic.Int32
	// Latency delays each JWKS answer, as a network between the gateway
	// and a real issuer does.
	Latency atomic.Int64 // a time.Duration

	mu    sync.Mutex
	extra *rsa.PrivateKey // a key published once rotated in
}

// NewIssuer starts an Issuer, closed when the test ends.
func NewIssuer(t testing.TB) *Issuer {
	t.Helper()
	is := &Issuer{}
	var err error
	if is.RSA, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		t.Fatal(err)
	}
	if is.EC, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": is.URL(), "jwks_uri": is.URL() + "/jwks", "token_endpoint": is.URL() + "/token"})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		if is.Down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		time.Sleep(time.Duration(is.Latency.Load()))
		is.Fetches.Add(1)
		json.NewEncoder(w).Encode(is.jwks())
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

// URL is the issuer identifier.
func (is *Issuer) URL() string { return is.srv.URL }

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func rsaJWK(k *rsa.PublicKey, kid string) map[string]any {
	return map[string]any{"kty": "RSA", "kid": kid, "alg": "RS256", "use": "sig", "n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}
}

func (is *Issuer) jwks() map[string]any {
	x, y := make([]byte, 32), make([]byte, 32)
	is.EC.X.FillBytes(x)
	is.EC.Y.FillBytes(y)
	keys := []any{
		rsaJWK(&is.RSA.PublicKey, "rsa1"),
		map[string]any{"kty": "EC", "kid": "ec1", "alg": "ES256", "use": "sig", "crv": "P-256", "x": b64(x), "y": b64(y)},
	}
	is.mu.Lock()
	if is.extra != nil {
		keys = append(keys, rsaJWK(&is.extra.PublicKey, "rsa2"))
	}
	is.mu.Unlock()
	return map[string]any{"keys": keys}
}

// Rotate publishes a new RSA key, kid rsa2, and returns it.
func (is *Issuer) Rotate(t testing.TB) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is.mu.Lock()
	is.extra = k
	is.mu.Unlock()
	return k
}

// Claims are a valid token's claims for sub and the audience aud, valid
// for an hour, with extra added (a nil value removes a claim).
func (is *Issuer) Claims(sub, aud string, extra jwt.MapClaims) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{"iss": is.URL(), "aud": aud, "sub": sub, "iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	for k, v := range extra {
		c[k] = v
		if v == nil {
			delete(c, k)
		}
	}
	return c
}

// Sign signs claims with the RSA key (RS256, kid rsa1).
func (is *Issuer) Sign(t testing.TB, c jwt.MapClaims) string {
	return SignJWT(t, jwt.SigningMethodRS256, is.RSA, "rsa1", c)
}

// SignEC signs claims with the EC key (ES256, kid ec1).
func (is *Issuer) SignEC(t testing.TB, c jwt.MapClaims) string {
	return SignJWT(t, jwt.SigningMethodES256, is.EC, "ec1", c)
}

// SignJWT signs claims with key by m, with kid in the header unless "".
func SignJWT(t testing.TB, m jwt.SigningMethod, key any, kid string, c jwt.MapClaims) string {
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
