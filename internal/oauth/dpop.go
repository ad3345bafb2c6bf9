package oauth

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// DPoP (RFC 9449, the MCP extension SEP-1932) binds access tokens to a key
// the bridge holds: each token request and each request to the MCP server
// carries a proof (a JWT signed with the key, naming the method and URL,
// and on a resource request the token's hash), so a token copied off the
// wire or out of a log is useless without the key.
//
// The bridge uses it when the entry says oauth.dpop: true, or when the
// MCP server asks: it challenges with the DPoP scheme, or its protected
// resource metadata requires DPoP-bound tokens. An authorization server
// that merely supports DPoP (dpop_signing_alg_values_supported) does not
// turn it on: its tokens would then be refused by a server that takes
// Bearer tokens only. A token the authorization
// server issued as token_type DPoP is presented with the DPoP scheme;
// one it issued as Bearer (it ignored the proof) as Bearer.

// dpopScheme is the Authorization scheme, the WWW-Authenticate challenge
// scheme and the token_type of DPoP.
const dpopScheme = "DPoP"

// dpopKey is the ES256 key proofs are signed with. It prints and logs as
// its thumbprint only; its private half is written nowhere but the token
// store's records (MarshalJSON).
type dpopKey struct {
	priv *ecdsa.PrivateKey
}

func newDPoPKey() (*dpopKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating the DPoP key: %w", err) // untested: the system's random source failed
	}
	return &dpopKey{priv: k}, nil
}

// jwk is the public key as a JWK (RFC 7517), members in RFC 7638's order.
func (k *dpopKey) jwk() map[string]string {
	b, _ := k.priv.PublicKey.Bytes() // 0x04 || X || Y, 32 bytes each on P-256
	enc := base64.RawURLEncoding.EncodeToString
	return map[string]string{"crv": "P-256", "kty": "EC", "x": enc(b[1:33]), "y": enc(b[33:65])}
}

// Thumbprint is the key's JWK SHA-256 thumbprint (RFC 7638), the cnf.jkt
// of the tokens bound to it.
func (k *dpopKey) Thumbprint() string {
	j := k.jwk()
	canon := fmt.Sprintf(`{"crv":%q,"kty":%q,"x":%q,"y":%q}`, j["crv"], j["kty"], j["x"], j["y"])
	sum := sha256.Sum256([]byte(canon))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func (k *dpopKey) String() string       { return "DPoP key " + k.Thumbprint() }
func (k *dpopKey) LogValue() slog.Value { return slog.StringValue(k.String()) }

// MarshalJSON stores the private key (PKCS#8, base64) in a record.
func (k *dpopKey) MarshalJSON() ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k.priv)
	if err != nil {
		return nil, err // untested: a P-256 key always marshals
	}
	return json.Marshal(base64.StdEncoding.EncodeToString(der))
}

func (k *dpopKey) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	der, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return errors.New("the DPoP key is not base64")
	}
	key, err := x509.ParsePKCS8PrivateKey(der)
	ec, ok := key.(*ecdsa.PrivateKey)
	if err != nil || !ok || ec.Curve != elliptic.P256() {
		return errors.New("the DPoP key is not a P-256 private key")
	}
	k.priv = ec
	return nil
}

// proof signs the DPoP proof of one request (RFC 9449 §4.2): a fresh jti
// and iat, the method and the URL without query and fragment, the
// server's nonce if it gave one, and for a resource request the access
// token's hash.
func (k *dpopKey) proof(method string, u *url.URL, accessToken, nonce string) (string, error) {
	claims := jwt.MapClaims{"jti": rand.Text(), "htm": method, "htu": htu(u), "iat": time.Now().Unix()}
	if nonce != "" {
		claims["nonce"] = nonce
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	t := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
	t.Header["typ"] = "dpop+jwt"
	t.Header["jwk"] = k.jwk()
	s, err := t.SignedString(k.priv)
	if err != nil {
		return "", fmt.Errorf("signing the DPoP proof: %w", err) // untested: an ES256 signature with a valid key does not fail
	}
	return s, nil
}

// htu is a request URL as a proof names it: no query, no fragment, no
// user information.
func htu(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = nil, "", false, "", ""
	return c.String()
}

// dpop is the DPoP state of one handler: whether proofs are sent, the
// key, the nonces servers handed out, and which access tokens are bound.
// Safe for concurrent use.
type dpop struct {
	forced bool // oauth.dpop: true

	mu        sync.Mutex
	requested bool // the MCP server asked (challenge, metadata), or a stored token is bound
	key       *dpopKey
	nonces    map[string]string // by origin (scheme://host)
	bound     []string          // access tokens issued as DPoP, newest last
}

// boundKept is how many bound access tokens are remembered: the current
// one and a few that requests in flight may still carry.
const boundKept = 4

func newDPoP(forced bool) *dpop {
	return &dpop{forced: forced, nonces: map[string]string{}}
}

// active reports whether token requests carry proofs.
func (d *dpop) active() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.forced || d.requested
}

// signer is the key, generated on first use.
func (d *dpop) signer() (*dpopKey, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.key == nil {
		k, err := newDPoPKey()
		if err != nil {
			return nil, err
		}
		d.key = k
	}
	return d.key, nil
}

// adopt takes the key stored with a record's tokens; DPoP is on, as the
// refresh of a token bound to it needs a proof.
func (d *dpop) adopt(k *dpopKey) {
	if d == nil || k == nil {
		return
	}
	d.mu.Lock()
	d.key, d.requested = k, true
	d.mu.Unlock()
}

// keyFor is the key to store with tok: the key, when tok is bound to it.
func (d *dpop) keyFor(tok *oauth2.Token) *dpopKey {
	if d == nil || tok == nil || !strings.EqualFold(tok.TokenType, dpopScheme) {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.key
}

// note records a token a token source handed out: a DPoP one is
// presented with the DPoP scheme and a proof.
func (d *dpop) note(tok *oauth2.Token) {
	if tok == nil || !strings.EqualFold(tok.TokenType, dpopScheme) {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if slices.Contains(d.bound, tok.AccessToken) {
		return
	}
	d.bound = append(d.bound, tok.AccessToken)
	if len(d.bound) > boundKept {
		d.bound = slices.Delete(d.bound, 0, len(d.bound)-boundKept)
	}
}

func (d *dpop) isBound(accessToken string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Contains(d.bound, accessToken)
}

// proof signs a proof for req with the nonce its server gave last.
func (d *dpop) proof(req *http.Request, accessToken string) (string, error) {
	k, err := d.signer()
	if err != nil {
		return "", err
	}
	d.mu.Lock()
	nonce := d.nonces[origin(req.URL)]
	d.mu.Unlock()
	return k.proof(req.Method, req.URL, accessToken, nonce)
}

// noteNonce keeps the nonce a server sent (on a challenge or on any
// answer, RFC 9449 §8 and §9) for the next proof to it.
func (d *dpop) noteNonce(u *url.URL, h http.Header) {
	n := h.Get("DPoP-Nonce")
	if n == "" {
		return
	}
	d.mu.Lock()
	d.nonces[origin(u)] = n
	d.mu.Unlock()
}

// noteChallenge turns DPoP on when a 401 from the MCP server offers the
// DPoP scheme with an algorithm the bridge signs with (ES256).
func (d *dpop) noteChallenge(resp *http.Response) {
	if resp.StatusCode != http.StatusUnauthorized {
		return
	}
	c, ok := dpopChallenge(resp.Header)
	if !ok {
		return
	}
	if algs := strings.Fields(c.Params["algs"]); len(algs) > 0 && !slices.Contains(algs, "ES256") {
		return
	}
	d.mu.Lock()
	d.requested = true
	d.mu.Unlock()
}

// noteResourceMetadata turns DPoP on when the MCP server's protected
// resource metadata says it takes only DPoP-bound tokens
// (dpop_bound_access_tokens_required, RFC 9449 §5.2) with an algorithm
// the bridge signs with. The body is left for the caller, unconsumed.
func (d *dpop) noteResourceMetadata(resp *http.Response) {
	if resp.StatusCode != http.StatusOK {
		return
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(data), resp.Body), resp.Body}
	var m struct {
		Required bool     `json:"dpop_bound_access_tokens_required"`
		Algs     []string `json:"dpop_signing_alg_values_supported"`
	}
	if json.Unmarshal(data, &m) != nil || !m.Required || (len(m.Algs) > 0 && !slices.Contains(m.Algs, "ES256")) {
		return
	}
	d.mu.Lock()
	d.requested = true
	d.mu.Unlock()
}

// dpopChallenge is the DPoP challenge among WWW-Authenticate's.
func dpopChallenge(h http.Header) (oauthex.Challenge, bool) {
	cs, err := oauthex.ParseWWWAuthenticate(h.Values("WWW-Authenticate"))
	if err != nil {
		return oauthex.Challenge{}, false
	}
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, dpopScheme) {
			return c, true
		}
	}
	return oauthex.Challenge{}, false
}

func origin(u *url.URL) string { return strings.ToLower(u.Scheme + "://" + u.Host) }
