package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// Mode says what an authorization that needs a person does.
type Mode int

const (
	// ModeNoLogin never blocks on a person: the attempt fails with a
	// NeedsLoginError (tools, call, status, serve). The zero value.
	ModeNoLogin Mode = iota
	// ModeHeadless fetches the authorization URL and takes the code from
	// its redirect: for authorization servers that approve without a
	// person (test and CI servers; --oauth-headless).
	ModeHeadless
	// ModeLogin runs a login: Options.Callback receives the code on a
	// loopback redirect after the person approved in a browser.
	ModeLogin
)

// Options are the bridge-wide settings of authorization; the zero value
// never blocks and keeps tokens in memory only.
type Options struct {
	Mode Mode
	// StateDir is where tokens are stored (see StateDir); "" keeps them in
	// memory, for the connection attempt only.
	StateDir string
	// Callback receives the code in ModeLogin; required there.
	Callback *Callback
	// HTTPClient talks to authorization servers; nil means one with a 30 s
	// timeout per request.
	HTTPClient *http.Client
	// Logger receives warnings (a failed refresh, a failed store); nil
	// discards them.
	Logger *slog.Logger
}

// Target is the server being authorized.
type Target struct {
	// ServerName names it in messages (mcpbridge login NAME).
	ServerName string
	// URL is its MCP endpoint, the resource of its tokens.
	URL string
}

// NeedsLoginError is the failure of an authorization that needs a person
// where none may be asked (ModeNoLogin).
type NeedsLoginError struct {
	Server string
}

func (e *NeedsLoginError) Error() string { return "needs a login: run " + e.Command() }

// Command is the command that logs in.
func (e *NeedsLoginError) Command() string { return "mcpbridge login " + e.Server }

// redirectHeadless is the redirect URI of a headless authorization: it is
// never contacted (the code is read from the Location header).
const redirectHeadless = "http://127.0.0.1/callback"

// authTimeout bounds one request to an authorization server.
const authTimeout = 30 * time.Second

// NewHandler builds the OAuth handler of one connection attempt to t,
// following cfg (nil: discovery and dynamic registration only).
func NewHandler(cfg *Config, t Target, opts Options) (auth.OAuthHandler, error) {
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: authTimeout}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	switch cfg.grant() {
	case GrantClientCredentials:
		return newClientCredentials(cfg, t, opts)
	case GrantCrossAppAccess:
		return newCrossApp(cfg, t, opts.HTTPClient), nil
	}
	return newAuthorizationCode(cfg, t, opts)
}

// newAuthorizationCode builds the go-sdk's authorization code handler: the
// registration methods in the spec's order (the SDK tries a Client ID
// Metadata Document first where the server supports one, then a
// pre-registered client, then dynamic registration), PKCE S256, the
// resource indicator, iss validation, scope selection and step-up.
func newAuthorizationCode(cfg *Config, t Target, opts Options) (auth.OAuthHandler, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	h := &codeHandler{target: t, mode: opts.Mode, scopes: cfg.Scopes}
	redirect := redirectHeadless
	var fetch auth.AuthorizationCodeFetcher = h.needsLogin
	switch opts.Mode {
	case ModeHeadless:
		fetch = headlessFetcher(opts.HTTPClient)
	case ModeLogin:
		if opts.Callback == nil {
			return nil, errors.New("oauth: ModeLogin needs a Callback") // untested: the CLI always passes one
		}
		redirect, fetch = opts.Callback.RedirectURL(), opts.Callback.Fetch
	}
	hc := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: fetch,
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				RedirectURIs:  []string{redirect},
				ClientName:    "mcpbridge",
				GrantTypes:    []string{"authorization_code", "refresh_token"},
				ResponseTypes: []string{"code"},
			},
		},
		RequestRefreshToken: true,
		Client:              opts.HTTPClient,
	}
	if cfg.ClientMetadataURL != "" {
		hc.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: cfg.ClientMetadataURL}
	}
	if cfg.ClientID != "" {
		hc.PreregisteredClient = &oauthex.ClientCredentials{ClientID: cfg.ClientID}
		if cfg.ClientSecret != "" {
			hc.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: cfg.ClientSecret}
		}
	}
	if len(cfg.Scopes) > 0 {
		scopes := cfg.Scopes
		hc.ScopeFilter = func([]string) []string { return scopes }
	}
	if opts.StateDir != "" {
		if err := h.persist(hc, cfg, opts); err != nil {
			return nil, err
		}
	}
	inner, err := auth.NewAuthorizationCodeHandler(hc)
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	h.inner, h.hc = inner, hc
	return h, nil
}

// codeHandler is the SDK's authorization code handler, which in
// ModeNoLogin gives up before registering a client when a person would be
// needed, and which falls back to the 2025-03-26 flow where the SDK
// refuses a server of that revision (legacy.go).
type codeHandler struct {
	inner  auth.OAuthHandler
	hc     *auth.AuthorizationCodeHandlerConfig // inner's
	target Target
	mode   Mode
	scopes []string // configured

	mu     sync.Mutex
	legacy oauth2.TokenSource // set while the 2025-03-26 flow's token is in use
}

var _ auth.OAuthHandler = (*codeHandler)(nil)

func (h *codeHandler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	legacy := h.legacy
	h.mu.Unlock()
	if legacy != nil {
		return legacy, nil
	}
	return h.inner.TokenSource(ctx)
}

func (h *codeHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if h.mode == ModeNoLogin && needsAuthorization(resp) {
		drain(resp)
		return &NeedsLoginError{Server: h.target.ServerName}
	}
	header := resp.Header
	err := h.inner.Authorize(ctx, req, resp)
	if err == nil {
		h.setLegacy(nil)
		return nil
	}
	asm, ok := h.legacyMetadata(ctx, header)
	if !ok {
		return err
	}
	return h.legacyAuthorize(ctx, asm, header)
}

func (h *codeHandler) setLegacy(ts oauth2.TokenSource) {
	h.mu.Lock()
	h.legacy = ts
	h.mu.Unlock()
}

// needsLogin is the code fetcher of ModeNoLogin, for an authorization the
// early check did not catch.
func (h *codeHandler) needsLogin(context.Context, *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	return nil, &NeedsLoginError{Server: h.target.ServerName} // untested: Authorize stops first
}

// needsAuthorization tells a response that calls for an authorization (a
// 401, or a 403 insufficient_scope) from one the SDK just retries.
func needsAuthorization(resp *http.Response) bool {
	if resp.StatusCode == http.StatusUnauthorized {
		return true
	}
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return false
	}
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["error"] == "insufficient_scope" {
			return true
		}
	}
	return false
}

// persist makes the handler start from the stored token of (t.URL, the
// configured client) and store the tokens it obtains.
func (h *codeHandler) persist(hc *auth.AuthorizationCodeHandlerConfig, cfg *Config, opts Options) error {
	store, err := OpenStore(opts.StateDir)
	if err != nil {
		return err
	}
	key := Key(h.target.URL, cfg)
	src := func(rec *Record) *storedSource {
		return &storedSource{store: store, key: key, client: opts.HTTPClient, log: opts.Logger, rec: rec}
	}
	rec, err := store.Load(key)
	if err != nil {
		return err
	}
	if rec != nil {
		hc.InitialTokenSource = src(rec)
	}
	hc.NewTokenSource = func(_ context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
		rec := &Record{
			Resource: h.target.URL, Client: cfg.clientIdentity(),
			ClientID: c.ClientID, ClientSecret: c.ClientSecret,
			TokenURL: c.Endpoint.TokenURL, AuthStyle: c.Endpoint.AuthStyle,
			Scopes: c.Scopes, Token: tok,
		}
		if err := store.Save(key, rec); err != nil {
			opts.Logger.Warn("storing the OAuth token failed; it lasts for this connection only", "error", err)
		}
		return src(rec), nil
	}
	return nil
}

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
	h := &grantHandler{target: t, client: opts.HTTPClient, scopes: cfg.Scopes, what: "client_credentials"}
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
