package oauth

import (
	"context"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// grantJWTBearer is the RFC 7523 authorization grant the ID-JAG is spent
// with.
const grantJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// newCrossApp builds the cross-app access grant (SEP-990): the person's
// ID token is exchanged at the IdP for an ID-JAG (RFC 8693, audience the
// MCP server's authorization server, resource the MCP server), which the
// client then spends at that authorization server (RFC 7523), presenting
// its own credentials the way the server supports. The go-sdk's
// EnterpriseHandler always posts them in the body, which servers that
// accept only client_secret_basic refuse.
func newCrossApp(cfg *Config, t Target, client *http.Client) *grantHandler {
	h := &grantHandler{target: t, client: client, scopes: cfg.Scopes, issuer: cfg.Issuer, what: "cross_app_access"}
	h.tokenStart = func(d *discovery) oauth2.TokenSource {
		ctx := h.clientContext()
		return tokenSourceFunc(func() (*oauth2.Token, error) {
			jag, err := idJAG(ctx, cfg.IdP, d, client)
			if err != nil {
				return nil, err
			}
			oc := &oauth2.Config{
				ClientID:     cfg.ClientID,
				ClientSecret: cfg.ClientSecret,
				Endpoint:     oauth2.Endpoint{TokenURL: d.asm.TokenEndpoint, AuthStyle: authStyle(d.asm.TokenEndpointAuthMethodsSupported)},
				Scopes:       d.scopes,
			}
			tok, err := oc.Exchange(ctx, "",
				oauth2.SetAuthURLParam("grant_type", grantJWTBearer),
				oauth2.SetAuthURLParam("assertion", jag))
			if err != nil {
				return nil, fmt.Errorf("spending the ID-JAG at the authorization server: %w", err)
			}
			return tok, nil
		})
	}
	return h
}

// idJAG exchanges the IdP's ID token for an ID-JAG.
func idJAG(ctx context.Context, idp *IdP, d *discovery, client *http.Client) (string, error) {
	endpoint := idp.TokenEndpoint
	if endpoint == "" {
		meta, err := auth.GetAuthServerMetadata(ctx, idp.Issuer, client)
		if err != nil {
			return "", fmt.Errorf("discovering the IdP's token endpoint: %w", err)
		}
		if meta == nil {
			return "", fmt.Errorf("discovering the IdP's token endpoint: the issuer serves no metadata; set idp.tokenEndpoint")
		}
		endpoint = meta.TokenEndpoint
	}
	creds := &oauthex.ClientCredentials{ClientID: idp.ClientID}
	if idp.ClientSecret != "" {
		creds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: idp.ClientSecret}
	}
	tok, err := oauthex.ExchangeToken(ctx, endpoint, &oauthex.TokenExchangeRequest{
		RequestedTokenType: oauthex.TokenTypeIDJAG,
		Audience:           d.asm.Issuer,
		Resource:           d.prm.Resource,
		Scope:              d.scopes,
		SubjectToken:       idp.IDToken,
		SubjectTokenType:   oauthex.TokenTypeIDToken,
	}, creds, client)
	if err != nil {
		return "", fmt.Errorf("exchanging the ID token at the IdP: %w", err)
	}
	return tok.AccessToken, nil
}
