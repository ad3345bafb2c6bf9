package mcptest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// The OAuthServer's DPoP (RFC 9449), checked as a strict resource server
// and authorization server would, independently of the bridge's code:
// one DPoP header, typ dpop+jwt, ES256 over the public jwk it carries (no
// private part), a jti never seen before, htm the request's method, htu
// its URL without query, iat within a minute, the nonce when one is
// required, and at the MCP server ath the hash of the token presented and
// the key the one the token is bound to.

// errUseNonce is the refusal of a proof without the required nonce.
var errUseNonce = errors.New("use_dpop_nonce")

// checkProof checks r's DPoP proof; accessToken is "" at the token
// endpoint. It returns the thumbprint of the proof's key.
func (s *OAuthServer) checkProof(r *http.Request, accessToken string) (string, error) {
	proofs := r.Header.Values("DPoP")
	if len(proofs) != 1 || strings.Contains(proofs[0], ",") {
		return "", fmt.Errorf("want exactly one DPoP proof, got %d", len(proofs))
	}
	var jkt string
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(proofs[0], claims, func(t *jwt.Token) (any, error) {
		if t.Header["typ"] != "dpop+jwt" {
			return nil, errors.New("typ is not dpop+jwt")
		}
		jwk, _ := t.Header["jwk"].(map[string]any)
		key, thumb, err := publicJWK(jwk)
		jkt = thumb
		return key, err
	}, jwt.WithValidMethods([]string{"ES256"}), jwt.WithIssuedAt())
	if err != nil {
		return "", fmt.Errorf("proof: %w", err)
	}
	if err := s.checkClaims(r, claims, accessToken); err != nil {
		return "", err
	}
	return jkt, nil
}

// checkClaims checks a verified proof's claims against r.
func (s *OAuthServer) checkClaims(r *http.Request, c jwt.MapClaims, accessToken string) error {
	jti, _ := c["jti"].(string)
	iat, _ := c["iat"].(float64)
	switch {
	case jti == "":
		return errors.New("no jti")
	case c["htm"] != r.Method:
		return fmt.Errorf("htm %v is not %s", c["htm"], r.Method)
	case c["htu"] != "http://"+r.Host+r.URL.Path:
		return fmt.Errorf("htu %v is not http://%s%s", c["htu"], r.Host, r.URL.Path)
	case math.Abs(float64(time.Now().Unix())-iat) > 60:
		return errors.New("iat is not within a minute of now")
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		if c["ath"] != base64.RawURLEncoding.EncodeToString(sum[:]) {
			return errors.New("ath is not the hash of the access token")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.jtis[jti] {
		return errors.New("replayed proof (jti seen before)")
	}
	s.jtis[jti] = true
	if s.opts.DPoPNonce != "" && c["nonce"] != s.nonce(accessToken != "") {
		return errUseNonce
	}
	return nil
}

// nonce is the nonce the token endpoint or the MCP server demands: not
// the same, though they share an origin, so that each has to hand its own
// out.
func (s *OAuthServer) nonce(resource bool) string {
	if resource {
		return s.opts.DPoPNonce + "-mcp"
	}
	return s.opts.DPoPNonce
}

// publicJWK is the P-256 public key of a proof's jwk and its RFC 7638
// thumbprint.
func publicJWK(jwk map[string]any) (*ecdsa.PublicKey, string, error) {
	if jwk == nil || jwk["d"] != nil || jwk["kty"] != "EC" || jwk["crv"] != "P-256" {
		return nil, "", errors.New("jwk is not a public P-256 key")
	}
	xs, _ := jwk["x"].(string)
	ys, _ := jwk["y"].(string)
	x, errX := base64.RawURLEncoding.DecodeString(xs)
	y, errY := base64.RawURLEncoding.DecodeString(ys)
	if errX != nil || errY != nil || len(x) != 32 || len(y) != 32 {
		return nil, "", errors.New("jwk coordinates are not 32-byte base64url")
	}
	key, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	if err != nil {
		return nil, "", fmt.Errorf("jwk: %w", err)
	}
	sum := sha256.Sum256(fmt.Appendf(nil, `{"crv":"P-256","kty":"EC","x":%q,"y":%q}`, xs, ys))
	return key, base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// requireDPoP is the MCP endpoint's gate with OAuthOptions.DPoP: a token
// bound to the key of a valid proof, presented with the DPoP scheme,
// passes on (as Bearer, to the token check behind); anything else is
// refused with a DPoP challenge.
func (s *OAuthServer) requireDPoP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if token == "" {
			s.challenge(w, "")
			return
		}
		s.mu.Lock()
		bound := s.bound[token]
		s.mu.Unlock()
		if !strings.EqualFold(scheme, "DPoP") || bound == "" {
			s.refuse(w, "invalid_token", fmt.Errorf("a %s token presented with %s", map[bool]string{true: "DPoP-bound", false: "Bearer"}[bound != ""], scheme))
			return
		}
		jkt, err := s.checkProof(r, token)
		if errors.Is(err, errUseNonce) {
			w.Header().Set("DPoP-Nonce", s.nonce(true))
			s.challenge(w, `error="use_dpop_nonce"`)
			return
		}
		if err == nil && jkt != bound {
			err = errors.New("the proof's key is not the one the token is bound to")
		}
		if err != nil {
			s.refuse(w, "invalid_dpop_proof", err)
			return
		}
		s.proofs.Add(1)
		r.Header.Set("Authorization", "Bearer "+token)
		next.ServeHTTP(w, r)
	})
}

func (s *OAuthServer) challenge(w http.ResponseWriter, params string) {
	c := `DPoP algs="ES256", resource_metadata="` + s.ts.URL + `/.well-known/oauth-protected-resource/mcp"`
	if params != "" {
		c += ", " + params
	}
	w.Header().Set("WWW-Authenticate", c)
	http.Error(w, "DPoP required", http.StatusUnauthorized)
}

// refuse answers 401 and records why.
func (s *OAuthServer) refuse(w http.ResponseWriter, code string, err error) {
	s.mu.Lock()
	s.refusals = append(s.refusals, err.Error())
	s.mu.Unlock()
	s.challenge(w, `error="`+code+`"`)
}

// DPoPRefusals are the reasons of the proofs and tokens the MCP server and
// the token endpoint refused, oldest first.
func (s *OAuthServer) DPoPRefusals() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.refusals...)
}

// DPoPProofs counts the requests the MCP server let through on a valid
// proof.
func (s *OAuthServer) DPoPProofs() int { return int(s.proofs.Load()) }

// tokenProof checks the proof of a token request with DPoP on. ok is
// false when the answer was sent (a refusal, or a nonce to use); jkt is
// "" when the request carries no proof (the token is then a Bearer one).
func (s *OAuthServer) tokenProof(w http.ResponseWriter, r *http.Request) (jkt string, ok bool) {
	if r.Header.Get("DPoP") == "" {
		return "", true
	}
	jkt, err := s.checkProof(r, "")
	if errors.Is(err, errUseNonce) {
		w.Header().Set("DPoP-Nonce", s.nonce(false))
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "use_dpop_nonce"})
		return "", false
	}
	if err != nil {
		s.mu.Lock()
		s.refusals = append(s.refusals, "token endpoint: "+err.Error())
		s.mu.Unlock()
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_dpop_proof"})
		return "", false
	}
	return jkt, true
}

// checkWorkload verifies a jwt-bearer grant's workload JWT: signed by
// OAuthOptions.WorkloadKey for this authorization server, unexpired. The
// assertions checked are recorded (WorkloadAssertions).
func (s *OAuthServer) checkWorkload(assertion string) bool {
	s.mu.Lock()
	s.workload = append(s.workload, assertion)
	s.mu.Unlock()
	_, err := jwt.Parse(assertion, func(*jwt.Token) (any, error) { return s.opts.WorkloadKey, nil },
		jwt.WithAudience(s.Issuer), jwt.WithExpirationRequired())
	return err == nil
}

// WorkloadAssertions are the workload JWTs the token endpoint was given,
// oldest first.
func (s *OAuthServer) WorkloadAssertions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.workload...)
}
