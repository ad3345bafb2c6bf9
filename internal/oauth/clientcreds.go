package oauth

import (
	"maps"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// newClientCredentials builds the client credentials grant (SEP-1046),
// with a client secret or a private_key_jwt assertion. It is ours, not the
// go-sdk's ClientCredentialsHandler: that one neither sends the resource
// indicator (RFC 8707, which the spec requires in token requests) nor
// supports private_key_jwt.
func newClientCredentials(cfg *Config, t Target, opts Options) (auth.OAuthHandler, error) {
	var sign func(audience string) (url.Values, error)
	if cfg.PrivateKeyFile != "" {
		key, method, err := loadSigningKey(cfg.PrivateKeyFile, cfg.SigningAlgorithm)
		if err != nil {
			return nil, err
		}
		sign = func(audience string) (url.Values, error) {
			assertion, err := signAssertion(cfg.ClientID, audience, key, method)
			return url.Values{"client_assertion_type": {assertionType}, "client_assertion": {assertion}}, err
		}
	}
	h := &grantHandler{target: t, client: opts.HTTPClient, scopes: cfg.Scopes, issuer: cfg.Issuer, what: "client_credentials"}
	h.tokenStart = func(d *discovery) oauth2.TokenSource {
		ctx := h.clientContext()
		return tokenSourceFunc(func() (*oauth2.Token, error) {
			cc := clientcredentials.Config{
				ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, TokenURL: d.asm.TokenEndpoint, Scopes: d.scopes,
				AuthStyle:      authStyle(d.asm.TokenEndpointAuthMethodsSupported),
				EndpointParams: url.Values{"resource": {d.prm.Resource}},
			}
			if sign != nil {
				// A fresh assertion (its own jti and expiry) per token request.
				params, err := sign(d.asm.Issuer)
				if err != nil {
					return nil, err
				}
				maps.Copy(cc.EndpointParams, params)
				cc.AuthStyle = oauth2.AuthStyleInParams
			}
			return cc.Token(ctx)
		})
	}
	return h, nil
}
