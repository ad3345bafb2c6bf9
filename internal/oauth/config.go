package oauth

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/mcpbridge/mcpbridge/internal/loopback"
)

// Grant is how the bridge obtains tokens.
type Grant string

const (
	// GrantAuthorizationCode: a person approves in a browser (or an
	// authorization server approves by itself, --oauth-headless); the default.
	GrantAuthorizationCode Grant = "authorization_code"
	// GrantClientCredentials: machine to machine, with a client secret or a
	// private_key_jwt assertion (SEP-1046).
	GrantClientCredentials Grant = "client_credentials"
	// GrantCrossAppAccess: an enterprise IdP's ID token exchanged for an
	// ID-JAG, then for an access token (SEP-990).
	GrantCrossAppAccess Grant = "cross_app_access"
	// GrantJWTBearer: a workload's JWT (a Kubernetes service account
	// token, a cloud's workload identity) spent as an RFC 7523 jwt-bearer
	// grant (workload identity federation, SEP-1933).
	GrantJWTBearer Grant = "jwt_bearer"
)

// Config is an entry's oauth block. Every field is optional: without one,
// a 401 with a challenge still starts discovery and dynamic client
// registration.
type Config struct {
	// Issuer (issuer) is the authorization server the credentials are
	// for: the MCP server's resource metadata must name it, else no
	// credential is sent. "" takes the one the MCP server names.
	Issuer string
	// ClientID (clientId) is a pre-registered client.
	ClientID string
	// ClientSecret (clientSecret) is its secret, usually ${VAR}.
	ClientSecret string
	// ClientMetadataURL (clientMetadataUrl) is a Client ID Metadata
	// Document URL, used as the client_id where the authorization server
	// supports it.
	ClientMetadataURL string
	// Scopes (scopes) replace the scopes discovered from the challenge or
	// the resource metadata.
	Scopes []string
	// Grant (grant); "" means GrantAuthorizationCode.
	Grant Grant
	// PrivateKeyFile (privateKeyFile) is a PEM private key: client
	// credentials authenticate with a signed JWT (private_key_jwt).
	PrivateKeyFile string
	// SigningAlgorithm (signingAlgorithm) signs that JWT; "" picks ES256
	// for an EC key, RS256 for an RSA key.
	SigningAlgorithm string
	// CallbackPort (callbackPort) is the loopback redirect port of a login;
	// 0 is any free port.
	CallbackPort int
	// IdP (idp) is the enterprise identity provider of cross_app_access.
	IdP *IdP
	// DPoP (dpop) binds tokens to a key of the bridge (RFC 9449) with
	// every authorization server; false still does where the MCP server
	// challenges with the DPoP scheme.
	DPoP bool
	// AssertionFile (assertionFile) holds the workload JWT of jwt_bearer,
	// read again for every token request, so a token the platform rotates
	// in place (as Kubernetes does a projected one) is picked up.
	AssertionFile string
	// AssertionEnv (assertionEnv) names the environment variable that
	// holds it instead.
	AssertionEnv string
}

// IdP is the identity provider of the cross_app_access grant.
type IdP struct {
	// Issuer (issuer) is the IdP's issuer URL.
	Issuer string
	// TokenEndpoint (tokenEndpoint) is where the ID token is exchanged; ""
	// discovers it from Issuer.
	TokenEndpoint string
	// ClientID (clientId) and ClientSecret (clientSecret) are the bridge's
	// client at the IdP; the secret is optional.
	ClientID, ClientSecret string
	// IDToken (idToken) is the person's OpenID Connect ID token, usually
	// ${VAR}.
	IDToken string
}

// Keys are the keys of the YAML oauth block and of its idp block.
func Keys() []string {
	return []string{"issuer", "clientId", "clientSecret", "clientMetadataUrl", "scopes", "grant",
		"privateKeyFile", "signingAlgorithm", "callbackPort", "idp", "dpop", "assertionFile", "assertionEnv"}
}

// IdPKeys are the keys of the idp block.
func IdPKeys() []string {
	return []string{"issuer", "tokenEndpoint", "clientId", "clientSecret", "idToken"}
}

// Grants are the valid grant values.
func Grants() []Grant {
	return []Grant{GrantAuthorizationCode, GrantClientCredentials, GrantCrossAppAccess, GrantJWTBearer}
}

// signingAlgorithms are the JWS algorithms a private_key_jwt may use.
func signingAlgorithms() []string {
	return []string{"ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}
}

// grant resolves the default.
func (c *Config) grant() Grant {
	if c == nil || c.Grant == "" {
		return GrantAuthorizationCode
	}
	return c.Grant
}

// Check reports every problem of c, each with the key it concerns
// (relative to the oauth block). Messages never quote a value that may
// have come from ${VAR} expansion.
func (c *Config) Check(report func(msg, key string)) {
	if !slices.Contains(Grants(), c.grant()) {
		report(fmt.Sprintf("must be one of %s", joinGrants()), "grant")
		return
	}
	if c.ClientMetadataURL != "" {
		if u, err := url.Parse(c.ClientMetadataURL); err != nil || u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") == "" {
			report("must be an https:// URL with a path (a Client ID Metadata Document)", "clientMetadataUrl")
		}
	}
	if c.Issuer != "" {
		if why := safeEndpoint(c.Issuer, true); why != "" {
			report(why, "issuer")
		}
	}
	if c.CallbackPort < 0 || c.CallbackPort > 65535 {
		report("must be a port number from 0 to 65535 (0: any free port)", "callbackPort")
	}
	if c.SigningAlgorithm != "" && !slices.Contains(signingAlgorithms(), c.SigningAlgorithm) {
		report("must be one of "+strings.Join(signingAlgorithms(), ", "), "signingAlgorithm")
	}
	for i, s := range c.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\r\n\"\\") {
			report("a scope must be non-empty, without spaces, quotes or backslashes", fmt.Sprintf("scopes[%d]", i))
		}
	}
	c.checkGrant(report)
}

// checkGrant checks the fields that belong to one grant.
func (c *Config) checkGrant(report func(msg, key string)) {
	g := c.grant()
	if g != GrantClientCredentials {
		for _, f := range []struct{ key, value string }{{"privateKeyFile", c.PrivateKeyFile}, {"signingAlgorithm", c.SigningAlgorithm}} {
			if f.value != "" {
				report("is only valid with grant: client_credentials", f.key)
			}
		}
	}
	if g != GrantCrossAppAccess && c.IdP != nil {
		report("is only valid with grant: cross_app_access", "idp")
	}
	if g != GrantJWTBearer {
		for _, f := range []struct{ key, value string }{{"assertionFile", c.AssertionFile}, {"assertionEnv", c.AssertionEnv}} {
			if f.value != "" {
				report("is only valid with grant: jwt_bearer", f.key)
			}
		}
	}
	switch g {
	case GrantClientCredentials:
		if c.ClientID == "" {
			report("is required with grant: client_credentials", "clientId")
		}
		if (c.ClientSecret == "") == (c.PrivateKeyFile == "") {
			report("client_credentials needs exactly one of clientSecret and privateKeyFile", "grant")
		}
	case GrantCrossAppAccess:
		if c.ClientID == "" {
			report("is required with grant: cross_app_access (the client at the MCP server's authorization server)", "clientId")
		}
		c.checkIdP(report)
	case GrantJWTBearer:
		if (c.AssertionFile == "") == (c.AssertionEnv == "") {
			report("jwt_bearer needs exactly one of assertionFile and assertionEnv (where the workload's JWT is)", "grant")
		}
		if c.AssertionEnv != "" && !envName.MatchString(c.AssertionEnv) {
			report("must be the name of an environment variable (letters, digits and _, not starting with a digit)", "assertionEnv")
		}
	}
}

// envName is the form of an environment variable's name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (c *Config) checkIdP(report func(msg, key string)) {
	if c.IdP == nil {
		report("is required with grant: cross_app_access", "idp")
		return
	}
	if c.IdP.Issuer == "" && c.IdP.TokenEndpoint == "" {
		report("needs issuer or tokenEndpoint", "idp")
	}
	for _, f := range []struct{ key, value string }{{"idp.clientId", c.IdP.ClientID}, {"idp.idToken", c.IdP.IDToken}} {
		if f.value == "" {
			report("is required with grant: cross_app_access", f.key)
		}
	}
	for _, f := range []struct{ key, value string }{{"idp.issuer", c.IdP.Issuer}, {"idp.tokenEndpoint", c.IdP.TokenEndpoint}} {
		if f.value == "" {
			continue
		}
		u, err := url.Parse(f.value)
		switch {
		case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
			report("must be an absolute http:// or https:// URL", f.key)
		case u.Scheme == "http" && !loopback.Host(u.Hostname()):
			// The ID token and the IdP's client secret go there.
			report("must be https:// (http:// only to this machine): the ID token and the IdP's client secret are sent there", f.key)
		}
	}
}

func joinGrants() string {
	var s []string
	for _, g := range Grants() {
		s = append(s, string(g))
	}
	return strings.Join(s, ", ")
}

// clientIdentity is the client part of a store key: the configured client,
// or "dynamic" for one registered on the fly.
func (c *Config) clientIdentity() string {
	switch {
	case c == nil:
		return "dynamic"
	case c.ClientID != "":
		return "id:" + c.ClientID
	case c.ClientMetadataURL != "":
		return "cimd:" + c.ClientMetadataURL
	}
	return "dynamic"
}
