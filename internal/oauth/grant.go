package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"
)

// grantHandler is an auth.OAuthHandler for the grants that need no person
// and that the SDK does not implement: on a 401 (or a 403
// insufficient_scope) it discovers the authorization server and gets a
// token from the source its grant builds; the source is asked again, by
// the grant, when the token expires.
type grantHandler struct {
	target     Target
	client     *http.Client
	scopes     []string // configured; nil: discovered
	issuer     string   // configured (oauth.issuer); "": discovered
	what       string   // the grant, for messages
	tokenStart func(d *discovery) oauth2.TokenSource

	mu      sync.Mutex
	ts      oauth2.TokenSource
	refused error // the authorization server's refusal of this attempt's grant
}

var _ auth.OAuthHandler = (*grantHandler)(nil)

func (h *grantHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ts == nil {
		return nil, nil
	}
	return h.ts, nil
}

func (h *grantHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer drain(resp)
	if !needsAuthorization(resp) {
		return nil // a plain 403: the request is retried and fails as it is
	}
	h.mu.Lock()
	refused := h.refused
	h.mu.Unlock()
	if refused != nil {
		// The SDK authorizes each request that meets a 401 (its connect
		// sends two); a grant refused once is not spent again.
		return refused
	}
	d, err := discover(ctx, h.client, h.target.URL, resp, h.scopes, h.issuer)
	if err != nil {
		return fmt.Errorf("%s: %w", h.what, err)
	}
	ts := oauth2.ReuseTokenSource(nil, h.tokenStart(d))
	if _, err := ts.Token(); err != nil {
		err = fmt.Errorf("%s: %w", h.what, err)
		if re := (*oauth2.RetrieveError)(nil); errors.As(err, &re) {
			h.mu.Lock()
			h.refused = err
			h.mu.Unlock()
		}
		return err
	}
	h.mu.Lock()
	h.ts = ts
	h.mu.Unlock()
	return nil
}

// clientContext carries the authorization servers' HTTP client to the
// oauth2 package, for the lifetime of a token source.
func (h *grantHandler) clientContext() context.Context {
	return context.WithValue(context.Background(), oauth2.HTTPClient, h.client)
}

// tokenSourceFunc adapts a function to oauth2.TokenSource.
type tokenSourceFunc func() (*oauth2.Token, error)

func (f tokenSourceFunc) Token() (*oauth2.Token, error) { return f() }
