package oauth

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// assertionType is the client_assertion_type of private_key_jwt (RFC 7523
// §2.2).
const assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// assertionLifetime is how long a client assertion is valid.
const assertionLifetime = 5 * time.Minute

// signAssertion signs the client assertion of private_key_jwt: iss and
// sub the client ID, aud the authorization server's issuer, a fresh jti.
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
