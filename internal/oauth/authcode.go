package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// newAuthorizationCode builds the go-sdk's authorization code handler: the
// registration methods in the spec's order (the SDK tries a Client ID
// Metadata Document first where the server supports one, then a
// pre-registered client, then dynamic registration), PKCE S256, the
// resource indicator, iss validation, scope selection and step-up.
func newAuthorizationCode(cfg *Config, t Target, opts Options, d *dpop) (auth.OAuthHandler, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	h := &codeHandler{target: t, mode: opts.Mode, scopes: cfg.Scopes}
	redirect, fetch := redirectHeadless, auth.AuthorizationCodeFetcher(h.needsLogin)
	switch opts.Mode {
	case ModeHeadless:
		fetch = headlessFetcher(opts.HTTPClient)
	case ModeLogin:
		if opts.Callback == nil {
			return nil, errors.New("oauth: ModeLogin needs a Callback") // untested: the CLI always passes one
		}
		redirect, fetch = opts.Callback.RedirectURL(), opts.Callback.Fetch
	}
	hc := codeConfig(cfg, redirect, fetch, opts.HTTPClient)
	if opts.StateDir != "" {
		// The store keeps a login: a server that asks for none connects
		// without it, and one that does is told why (Authorize).
		h.storeErr = h.persist(hc, cfg, opts, d)
	}
	inner, err := auth.NewAuthorizationCodeHandler(hc)
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	h.inner, h.hc = inner, hc
	return h, nil
}

// codeConfig is the SDK handler's configuration: every registration
// method cfg allows (dynamic registration always), refresh tokens wanted.
func codeConfig(cfg *Config, redirect string, fetch auth.AuthorizationCodeFetcher, client *http.Client) *auth.AuthorizationCodeHandlerConfig {
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
		Client:              client,
	}
	if cfg.ClientMetadataURL != "" {
		hc.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: cfg.ClientMetadataURL}
	}
	if cfg.ClientID != "" {
		hc.PreregisteredClient = &oauthex.ClientCredentials{ClientID: cfg.ClientID, Issuer: cfg.Issuer}
		if cfg.ClientSecret != "" {
			hc.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: cfg.ClientSecret}
		}
	}
	if len(cfg.Scopes) > 0 {
		scopes := cfg.Scopes
		hc.ScopeFilter = func([]string) []string { return scopes }
	}
	return hc
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

	// storeErr is why the stored grant cannot be read or a new one kept:
	// the answer to a server that asks for authorization.
	storeErr error

	mu     sync.Mutex
	legacy oauth2.TokenSource // set while the 2025-03-26 flow's token is in use
	stored *storedSource      // the stored grant's source in use, nil without one
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
	if h.storeErr != nil && needsAuthorization(resp) {
		drain(resp)
		return h.storeErr
	}
	if resp.StatusCode == http.StatusUnauthorized && h.refreshRefused() {
		drain(resp)
		return nil // the SDK sends the request again, with the refreshed token
	}
	if h.mode == ModeNoLogin && needsAuthorization(resp) {
		return h.needsLoginOrCredential(ctx, resp)
	}
	header, status := resp.Header, resp.StatusCode
	err := h.inner.Authorize(ctx, req, resp)
	if err == nil {
		h.setLegacy(nil)
		return nil
	}
	asm, ok := h.legacyMetadata(ctx, header)
	if !ok && status == http.StatusUnauthorized && !offersOAuth(ctx, h.hc.Client, h.target.URL, header) {
		return &CredentialError{Said: peerText(err.Error())} // the SDK tried the default endpoints
	}
	if !ok {
		return err
	}
	return h.legacyAuthorize(ctx, asm, header)
}

// needsLoginOrCredential is the failure of an authorization resp calls
// for where no person may be asked: a login, unless the server offers no
// OAuth at all.
func (h *codeHandler) needsLoginOrCredential(ctx context.Context, resp *http.Response) error {
	if resp.StatusCode == http.StatusUnauthorized && !offersOAuth(ctx, h.hc.Client, h.target.URL, resp.Header) {
		return credentialError(resp)
	}
	drain(resp)
	return &NeedsLoginError{Server: h.target.ServerName}
}

// refreshRefused spends the stored refresh token when the server refused
// the stored grant's access token though the clock still counts it valid
// (revoked early, or issued without expires_in): the SDK refreshes only
// what expired, and would go on to a new login, or to needs-login, with
// a working refresh token at hand.
func (h *codeHandler) refreshRefused() bool {
	h.mu.Lock()
	s := h.stored
	h.mu.Unlock()
	return s != nil && s.refreshRefused()
}

func (h *codeHandler) setStored(s *storedSource) {
	h.mu.Lock()
	h.stored = s
	h.mu.Unlock()
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
// configured client) and store the tokens it obtains, a DPoP-bound one
// with its key.
func (h *codeHandler) persist(hc *auth.AuthorizationCodeHandlerConfig, cfg *Config, opts Options, d *dpop) error {
	store, err := OpenStore(opts.StateDir)
	if err != nil {
		return fmt.Errorf("server %q asks for an OAuth login, which cannot be kept: %w", h.target.ServerName, err)
	}
	key := Key(h.target.URL, cfg)
	src := func(rec *Record) *storedSource {
		s := &storedSource{store: store, key: key, client: opts.HTTPClient, log: opts.Logger, dpop: d, rec: rec}
		h.setStored(s)
		return s
	}
	rec, err := store.Load(key)
	if err != nil {
		return err
	}
	if rec != nil {
		d.adopt(rec.DPoPKey)
		hc.InitialTokenSource = src(rec)
	}
	hc.NewTokenSource = func(_ context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
		rec := &Record{
			Resource: h.target.URL, Client: cfg.clientIdentity(),
			ClientID: c.ClientID, ClientSecret: c.ClientSecret,
			TokenURL: c.Endpoint.TokenURL, AuthStyle: c.Endpoint.AuthStyle,
			Scopes: c.Scopes, Token: tok, DPoPKey: d.keyFor(tok),
		}
		if err := saveLocked(store, key, rec); err != nil {
			opts.Logger.Warn("storing the OAuth token failed; it lasts for this connection only", "error", err)
		}
		return src(rec), nil
	}
	return nil
}

// saveLocked stores the record of a new grant under key's lock, so that
// a refresh another process has under way, of the grant before, does not
// land over it.
func saveLocked(store *Store, key string, rec *Record) error {
	ctx, cancel := context.WithTimeout(context.Background(), lockWait)
	defer cancel()
	unlock, err := store.Lock(ctx, key)
	if err != nil {
		return err
	}
	defer unlock()
	return store.Save(key, rec)
}
