package mcpclient

import (
	"errors"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/mcpbridge/mcpbridge/internal/oauth"
	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
)

// OAuthConfig is an entry's oauth block (docs in internal/oauth.Config):
// clientId, clientSecret, clientMetadataUrl, scopes, grant,
// privateKeyFile, signingAlgorithm, callbackPort, idp, dpop,
// assertionFile, assertionEnv.
type OAuthConfig = oauth.Config

// OAuthIdP is the idp block of grant: cross_app_access.
type OAuthIdP = oauth.IdP

// OAuthOptions are the bridge-wide OAuth settings (mode, token store).
type OAuthOptions = oauth.Options

func (c Config) checkOAuth(report reportFunc) {
	if c.OAuth == nil {
		return
	}
	if c.Transport == TransportStdio {
		report("oauth is only valid with transport: streamable-http", "oauth")
		return
	}
	c.OAuth.Check(func(msg, key string) { report(msg, "oauth."+key) })
}

// decodeOAuth decodes the oauth block, expanding ${VAR} in every string
// (secrets come from the environment); nil when absent. Errors never quote
// a value.
func decodeOAuth(d *yamlconf.Decoder, m *yamlconf.Map) *OAuthConfig {
	o, ok := d.Map(m.Value("oauth"), m.Path("oauth"))
	if !ok {
		return nil
	}
	o.Reject(oauth.Keys()...)
	c := &OAuthConfig{}
	c.Issuer, _ = o.ExpandString("issuer")
	c.ClientID, _ = o.ExpandString("clientId")
	c.ClientSecret, _ = o.ExpandString("clientSecret")
	c.ClientMetadataURL, _ = o.ExpandString("clientMetadataUrl")
	c.Scopes, _ = o.ExpandStringList("scopes")
	grant, _ := o.String("grant")
	c.Grant = oauth.Grant(grant)
	c.PrivateKeyFile, _ = o.ExpandString("privateKeyFile")
	c.SigningAlgorithm, _ = o.String("signingAlgorithm")
	if v, ok := o.Int("callbackPort", 0, 65535); ok {
		c.CallbackPort = int(v)
	}
	c.DPoP, _ = o.Bool("dpop")
	c.AssertionFile, _ = o.ExpandString("assertionFile")
	c.AssertionEnv, _ = o.String("assertionEnv")
	if p, ok := d.Map(o.Value("idp"), o.Path("idp")); ok {
		p.Reject(oauth.IdPKeys()...)
		c.IdP = &OAuthIdP{}
		c.IdP.Issuer, _ = p.ExpandString("issuer")
		c.IdP.TokenEndpoint, _ = p.ExpandString("tokenEndpoint")
		c.IdP.ClientID, _ = p.ExpandString("clientId")
		c.IdP.ClientSecret, _ = p.ExpandString("clientSecret")
		c.IdP.IDToken, _ = p.ExpandString("idToken")
	}
	return c
}

// cloneOAuth copies an oauth block, sharing nothing mutable.
func cloneOAuth(c *OAuthConfig) *OAuthConfig {
	if c == nil {
		return nil
	}
	out := *c
	out.Scopes = slices.Clone(c.Scopes)
	if c.IdP != nil {
		idp := *c.IdP
		out.IdP = &idp
	}
	return &out
}

// oauthHandler is the OAuth handler of one Streamable HTTP attempt; when
// the entry sends its own Authorization header and has no oauth block, one
// that only says a refusal is of that header's credential.
func (s *Server) oauthHandler() (auth.OAuthHandler, error) {
	if s.cfg.OAuth == nil && hasAuthorization(s.cfg.Headers) {
		return oauth.HeaderHandler(), nil
	}
	opts := s.opts.OAuth
	if opts.Logger == nil {
		opts.Logger = s.log
	}
	return oauth.NewHandler(s.cfg.OAuth, oauth.Target{ServerName: s.cfg.ServerName, URL: s.cfg.URL}, opts)
}

func hasAuthorization(headers map[string]string) bool {
	for k := range headers {
		if http.CanonicalHeaderKey(k) == "Authorization" {
			return true
		}
	}
	return false
}

// needsLogin reports whether err is a server wanting a person to log in.
func needsLogin(err error) bool {
	var nl *oauth.NeedsLoginError
	return errors.As(err, &nl)
}

// downText is the status text of why a server is down; for a login, the
// command to run (the state says needs-login) rather than the request it
// interrupted.
func downText(err error) string {
	var nl *oauth.NeedsLoginError
	if errors.As(err, &nl) {
		return "run " + nl.Command()
	}
	return err.Error()
}
