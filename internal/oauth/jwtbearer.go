package oauth

import (
	"fmt"
	"net/url"
	"os"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// newJWTBearer builds the workload identity grant (RFC 7523 §2.1, SEP-1933):
// the workload's JWT, issued by its platform for the authorization server,
// is the grant. The JWT is read again for every token request, so one the
// platform rotated is used; a refused grant is reported as it is, never
// retried and never replaced by another grant (a workload has no person to
// log in).
func newJWTBearer(cfg *Config, t Target, opts Options) *grantHandler {
	read := assertionReader(cfg, opts.LookupEnv)
	h := &grantHandler{target: t, client: opts.HTTPClient, scopes: cfg.Scopes, issuer: cfg.Issuer, what: "jwt_bearer"}
	h.tokenStart = func(d *discovery) oauth2.TokenSource {
		ctx := h.clientContext()
		return tokenSourceFunc(func() (*oauth2.Token, error) {
			assertion, err := read()
			if err != nil {
				return nil, err
			}
			// The clientcredentials package lets grant_type be replaced; it
			// sends no client_id when none is configured.
			cc := clientcredentials.Config{
				ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, TokenURL: d.asm.TokenEndpoint, Scopes: d.scopes,
				AuthStyle: jwtBearerAuthStyle(cfg.ClientSecret, d.asm.TokenEndpointAuthMethodsSupported),
				EndpointParams: url.Values{
					"grant_type": {grantJWTBearer}, "assertion": {assertion}, "resource": {d.prm.Resource},
				},
			}
			tok, err := cc.Token(ctx)
			if err != nil {
				return nil, fmt.Errorf("the authorization server refused the workload's JWT: %w", err)
			}
			return tok, nil
		})
	}
	return h
}

// jwtBearerAuthStyle is how the client (if any) authenticates: a public
// client only names itself in the body; a secret goes where the server
// takes it, HTTP Basic by default. Never auto-detection, which would try
// a refused grant a second time.
func jwtBearerAuthStyle(secret string, supported []string) oauth2.AuthStyle {
	if secret == "" {
		return oauth2.AuthStyleInParams
	}
	if s := authStyle(supported); s != oauth2.AuthStyleAutoDetect {
		return s
	}
	return oauth2.AuthStyleInHeader
}

// assertionReader reads the workload's JWT from the configured file or
// environment variable. Errors name the place, never the content.
func assertionReader(cfg *Config, lookup func(string) (string, bool)) func() (string, error) {
	if cfg.AssertionEnv != "" {
		return func() (string, error) {
			v, _ := lookup(cfg.AssertionEnv)
			if v = strings.TrimSpace(v); v == "" {
				return "", fmt.Errorf("oauth.assertionEnv: $%s is not set or empty; it must hold the workload's JWT", cfg.AssertionEnv)
			}
			return v, nil
		}
	}
	return func() (string, error) {
		data, err := os.ReadFile(cfg.AssertionFile)
		if err != nil {
			return "", fmt.Errorf("oauth.assertionFile: %w", err)
		}
		v := strings.TrimSpace(string(data))
		if v == "" {
			return "", fmt.Errorf("oauth.assertionFile %s is empty; it must hold the workload's JWT", cfg.AssertionFile)
		}
		return v, nil
	}
}
