package oauth

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// lockWait bounds how long a refresh waits for another process's.
const lockWait = 60 * time.Second

// storedSource is the token source of a stored grant. It refreshes under
// the store's lock of its key: after taking the lock it reads the record
// again, and uses a token another process refreshed meanwhile instead of
// spending the refresh token a second time (authorization servers that
// rotate refresh tokens refuse the second use, and may revoke the grant).
type storedSource struct {
	store  *Store
	key    string
	client *http.Client // for the token endpoint
	log    *slog.Logger
	dpop   *dpop // takes the key of a record another process stored

	mu     sync.Mutex
	rec    *Record
	forced string // the access token a refreshRefused last got: not forced again
}

// Token returns the current access token, refreshing it when it expired.
func (s *storedSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec.Token.Valid() {
		return s.rec.Token, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), lockWait)
	defer cancel()
	unlock, err := s.store.Lock(ctx, s.key)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rec, err := s.store.Load(s.key)
	switch {
	case err == nil && rec == nil:
		// Logged out meanwhile (mcpbridge logout): refreshing would
		// write the grant back. invalid_grant makes the SDK ask for a new
		// authorization, as for a grant the server ended.
		return nil, &oauth2.RetrieveError{ErrorCode: "invalid_grant", ErrorDescription: "the stored grant was removed (mcpbridge logout); log in again"}
	case err == nil:
		s.rec = rec // another process may have refreshed, or logged in again
		s.dpop.adopt(rec.DPoPKey)
		if rec.Token.Valid() {
			return rec.Token, nil
		}
	}
	return s.refresh(ctx)
}

// refreshRefused gets a new access token in place of the one s gave,
// which the server refused though it has not expired: the one another
// process stored meanwhile, else a refresh. It reports whether there is
// a new one to try. Once per token: a server that refuses the token this
// got too is not asked again (a revoked grant goes on to a login).
func (s *storedSource) refreshRefused() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	refused := s.rec.Token.AccessToken
	if refused == "" || refused == s.forced {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), lockWait)
	defer cancel()
	unlock, err := s.store.Lock(ctx, s.key)
	if err != nil {
		return false
	}
	defer unlock()
	rec, err := s.store.Load(s.key)
	if err != nil || rec == nil {
		return false // damaged, or logged out: a login
	}
	s.rec = rec
	s.dpop.adopt(rec.DPoPKey)
	if rec.Token.AccessToken != refused && rec.Token.Valid() {
		s.forced = rec.Token.AccessToken // another process's, not refused yet
		return true
	}
	// Refreshed as expired: the oauth2 package refreshes nothing it
	// counts valid.
	stale := *rec
	expired := *rec.Token
	expired.Expiry = time.Unix(1, 0)
	stale.Token = &expired
	s.rec = &stale
	tok, err := s.refresh(ctx)
	if err != nil {
		s.rec = rec
		return false
	}
	s.forced = tok.AccessToken
	return tok.AccessToken != refused
}

// refresh spends the refresh token, with the lock held, and stores the
// result. A failed refresh leaves the record alone, and a token that has
// not actually expired yet (oauth2 counts it expired a little early) is
// still used.
func (s *storedSource) refresh(ctx context.Context) (*oauth2.Token, error) {
	old := s.rec.Token
	if old.RefreshToken == "" {
		// invalid_grant makes the SDK send the request without a token, so
		// the server's 401 leads to a new authorization.
		return nil, &oauth2.RetrieveError{ErrorCode: "invalid_grant", ErrorDescription: "the stored token expired and there is no refresh token"}
	}
	client := *s.client
	client.Transport = &resourceRefresh{base: client.Transport, resource: s.rec.Resource}
	ctx = context.WithValue(ctx, oauth2.HTTPClient, &client)
	tok, err := s.rec.oauthConfig().TokenSource(ctx, old).Token()
	if err != nil {
		err = peerError(err) // the authorization server's text, logged and returned
		if !old.Expiry.IsZero() && time.Now().Before(old.Expiry) {
			s.log.Warn("refreshing the OAuth token failed; using the current one until it expires", "error", err)
			return old, nil
		}
		return nil, fmt.Errorf("refreshing the OAuth token: %w", err)
	}
	rec := *s.rec
	rec.Token = tok
	if k := s.dpop.keyFor(tok); k != nil {
		// A refresh can bind what was a bearer grant (the proof went with
		// it): the key goes with the token, or the next process signs with
		// another and the token is refused.
		rec.DPoPKey = k
	}
	if err := s.store.Save(s.key, &rec); err != nil {
		// The new token works for this process; the next one refreshes again.
		s.log.Warn("storing the refreshed OAuth token failed", "error", err)
	}
	s.rec = &rec
	return tok, nil
}

// resourceRefresh adds the resource indicator to refresh requests (RFC
// 8707 §2.2; the spec asks for it in every token request), which the
// oauth2 package sends without one.
type resourceRefresh struct {
	base     http.RoundTripper // nil: http.DefaultTransport
	resource string
}

func (rt *resourceRefresh) RoundTrip(req *http.Request) (*http.Response, error) {
	base := rt.base
	if base == nil {
		base = http.DefaultTransport
	}
	if req.Method != http.MethodPost || req.Body == nil || rt.resource == "" {
		return base.RoundTrip(req)
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	form, err := url.ParseQuery(string(body))
	if err == nil && form.Get("grant_type") == "refresh_token" && !form.Has("resource") {
		form.Set("resource", rt.resource)
		body = []byte(form.Encode())
	}
	req = req.Clone(req.Context())
	req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return base.RoundTrip(req)
}
