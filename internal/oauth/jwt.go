package oauth

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// assertionType is the client_assertion_type of private_key_jwt (RFC 7523
// §2.2).
const assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// assertionLifetime is how long a client assertion is valid.
const assertionLifetime = 5 * time.Minute

// newJWTClientCredentials builds the client credentials grant that
// authenticates with a JWT signed by the configured private key
// (private_key_jwt, SEP-1046): iss and sub the client ID, aud the
// authorization server's issuer, a fresh jti per token request.
func newJWTClientCredentials(cfg *Config, t Target, client *http.Client) (*grantHandler, error) {
	key, method, err := loadSigningKey(cfg.PrivateKeyFile, cfg.SigningAlgorithm)
	if err != nil {
		return nil, err
	}
	h := &grantHandler{target: t, client: client, scopes: cfg.Scopes, what: "client_credentials (private_key_jwt)"}
	h.tokenStart = func(d *discovery) oauth2.TokenSource {
		ctx := h.clientContext()
		return tokenSourceFunc(func() (*oauth2.Token, error) {
			assertion, err := signAssertion(cfg.ClientID, d.asm.Issuer, key, method)
			if err != nil {
				return nil, err
			}
			cc := clientcredentials.Config{
				ClientID:  cfg.ClientID,
				TokenURL:  d.asm.TokenEndpoint,
				Scopes:    d.scopes,
				AuthStyle: oauth2.AuthStyleInParams,
				EndpointParams: url.Values{
					"client_assertion_type": {assertionType},
					"client_assertion":      {assertion},
					"resource":              {d.prm.Resource},
				},
			}
			return cc.Token(ctx)
		})
	}
	return h, nil
}

func signAssertion(clientID, audience string, key any, method jwt.SigningMethod) (string, error) {
	now := time.Now()
	claims := jwt.RegisteredClaims{
		Issuer:    clientID,
		Subject:   clientID,
		Audience:  jwt.ClaimStrings{audience},
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(assertionLifetime)),
		ID:        rand.Text(),
	}
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		return "", fmt.Errorf("signing the client assertion: %w", err)
	}
	return s, nil
}

// loadSigningKey reads a PEM private key (PKCS#8, SEC 1 or PKCS#1) and
// the algorithm to sign with: alg, or ES256 for an EC key and RS256 for
// an RSA key. Errors name the file, never its content.
func loadSigningKey(path, alg string) (any, jwt.SigningMethod, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("privateKeyFile: %w", err)
	}
	var key any
	if ec, err := jwt.ParseECPrivateKeyFromPEM(data); err == nil {
		key = ec
	} else if rk, err := jwt.ParseRSAPrivateKeyFromPEM(data); err == nil {
		key = rk
	} else {
		return nil, nil, fmt.Errorf("privateKeyFile %s: not a PEM EC or RSA private key", path)
	}
	if alg == "" {
		alg = "RS256"
		if _, ok := key.(*ecdsa.PrivateKey); ok {
			alg = "ES256"
		}
	}
	method := jwt.GetSigningMethod(alg)
	if method == nil {
		return nil, nil, fmt.Errorf("signingAlgorithm %q is not supported", alg) // untested: Check refuses it first
	}
	_, isEC := key.(*ecdsa.PrivateKey)
	_, isRSA := key.(*rsa.PrivateKey)
	if isEC != strings.HasPrefix(alg, "ES") || isRSA == strings.HasPrefix(alg, "ES") {
		return nil, nil, errors.New("privateKeyFile " + path + ": the key does not fit signingAlgorithm " + alg)
	}
	return key, method, nil
}
