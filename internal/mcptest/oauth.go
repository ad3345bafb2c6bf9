package mcptest

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// OAuthOptions configures [NewOAuthServer].
type OAuthOptions struct {
	// ExpiresIn is the expires_in of every access token, in seconds; 0
	// means 3600. A value under 10 makes the oauth2 package count the token
	// expired at once, so every use refreshes it (refreshes without
	// waiting).
	ExpiresIn int
	// RefreshHold delays each refresh answer, widening the window in
	// which two clients could spend one refresh token.
	RefreshHold time.Duration
	// ClientID with ClientSecret or ClientKey enables the client
	// credentials grant for that client: the secret in the body or in
	// HTTP Basic, or a private_key_jwt assertion signed by the key's
	// private half (iss and sub the client, aud the issuer).
	ClientID, ClientSecret string
	ClientKey              crypto.PublicKey
	// IDToken enables cross-app access (SEP-990) for ClientID and
	// ClientSecret: an IdP at Issuer+"/idp" exchanges this ID token for an
	// ID-JAG, which the token endpoint takes as a JWT bearer grant from
	// the client authenticated with HTTP Basic.
	IDToken string
	// Legacy makes a server of the 2025-03-26 revision: no protected
	// resource metadata, and the root's authorization server metadata
	// names another issuer (the root plus /oauth) than the root.
	Legacy bool
	// DPoP makes the MCP server take only DPoP-bound tokens (RFC 9449),
	// challenging with the DPoP scheme, and the token endpoint bind a
	// token to the key of the request's proof (token_type DPoP), a
	// refresh token too: refreshing it takes a proof with that key. See
	// dpop.go for the checks.
	DPoP bool
	// DPoPNonce, with DPoP, is the nonce the token endpoint demands in
	// proofs (use_dpop_nonce until it is there); the MCP server demands it
	// with "-mcp" appended.
	DPoPNonce string
	// WorkloadKey enables the jwt-bearer grant of workload identity (RFC
	// 7523 §2.1): an assertion it signed, for the issuer, unexpired.
	WorkloadKey crypto.PublicKey
}

// OAuthServer is an MCP server protected by OAuth 2.1 together with its
// authorization server, on one real HTTP server on 127.0.0.1: protected
// resource metadata, authorization server metadata, dynamic client
// registration, an authorization endpoint that approves at once (302 to
// the redirect URI with the code), PKCE S256 and the resource indicator
// checked, and a token endpoint for the authorization code and refresh
// token grants (the resource indicator required in both) that rotates
// refresh tokens (a spent one is refused).
// Methods are safe for concurrent use.
type OAuthServer struct {
	// URL is the MCP endpoint; Issuer the authorization server.
	URL, Issuer string

	opts OAuthOptions
	ts   *httptest.Server

	registrations, authorizations, refreshes, proofs atomic.Int32

	mu      sync.Mutex
	codes   map[string]pendingCode
	access  map[string]bool
	refresh map[string]bool
	jags    map[string]bool // ID-JAGs the IdP issued, not spent yet

	jtis         map[string]bool   // DPoP proofs seen
	bound        map[string]string // DPoP-bound access tokens: their key's thumbprint
	boundRefresh map[string]string // and refresh tokens
	refusals     []string          // why DPoP proofs were refused
	workload     []string          // workload JWTs given
}

type pendingCode struct{ challenge, redirect string }

// NewOAuthServer serves srv behind OAuth until the end of the test.
func NewOAuthServer(t testing.TB, srv *mcp.Server, opts OAuthOptions) *OAuthServer {
	t.Helper()
	if opts.ExpiresIn == 0 {
		opts.ExpiresIn = 3600
	}
	s := &OAuthServer{opts: opts, codes: map[string]pendingCode{}, access: map[string]bool{}, refresh: map[string]bool{}, jags: map[string]bool{},
		jtis: map[string]bool{}, bound: map[string]string{}, boundRefresh: map[string]string{}}
	mux := http.NewServeMux()
	s.ts = httptest.NewServer(mux)
	s.URL, s.Issuer = s.ts.URL+"/mcp", s.ts.URL
	prm := s.ts.URL + "/.well-known/oauth-protected-resource/mcp"
	if opts.Legacy {
		prm = ""
		s.Issuer = s.ts.URL + "/oauth"
	} else {
		mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource: s.URL, AuthorizationServers: []string{s.Issuer}, ScopesSupported: []string{"tools"},
		}))
	}
	mux.HandleFunc("/.well-known/oauth-authorization-server", s.metadata)
	mux.HandleFunc("/.well-known/oauth-authorization-server/idp", s.idpMetadata)
	mux.HandleFunc("/idp/token", s.idpToken)
	mux.HandleFunc("/register", s.register)
	mux.HandleFunc("/authorize", s.authorize)
	mux.HandleFunc("/token", s.token)
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var gate http.Handler = auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: prm})(mcpHandler)
	if opts.DPoP {
		gate = s.requireDPoP(gate)
	}
	mux.Handle("/mcp", gate)
	t.Cleanup(func() {
		s.ts.CloseClientConnections()
		s.ts.Close()
	})
	return s
}

// Registrations, Authorizations and Refreshes count the requests of each
// kind the authorization server granted.
func (s *OAuthServer) Registrations() int  { return int(s.registrations.Load()) }
func (s *OAuthServer) Authorizations() int { return int(s.authorizations.Load()) }
func (s *OAuthServer) Refreshes() int      { return int(s.refreshes.Load()) }

// Valid reports whether the MCP server accepts the access token.
func (s *OAuthServer) Valid(access string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.access[access]
}

// RefreshToken issues a refresh token without a login, for tests that
// start from a stored grant.
func (s *OAuthServer) RefreshToken() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := rand.Text()
	s.refresh[r] = true
	return r
}

// RevokeAccess forgets every access token, keeping the refresh tokens:
// a grant revoked early, or whose tokens carry no expiry, which a refresh
// renews.
func (s *OAuthServer) RevokeAccess() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
}

// RevokeAll forgets every access and refresh token: the next request needs
// a new login.
func (s *OAuthServer) RevokeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
	clear(s.refresh)
}

func (s *OAuthServer) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	if !s.Valid(token) {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Scopes: []string{"tools"}, Expiration: time.Now().Add(time.Hour)}, nil
}

func (s *OAuthServer) metadata(w http.ResponseWriter, _ *http.Request) {
	m := map[string]any{
		"issuer":                                s.Issuer,
		"authorization_endpoint":                s.ts.URL + "/authorize",
		"token_endpoint":                        s.ts.URL + "/token",
		"registration_endpoint":                 s.ts.URL + "/register",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token", "client_credentials"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none", "client_secret_basic", "private_key_jwt"},
		"scopes_supported":                      []string{"tools", "offline_access"},
	}
	if s.opts.DPoP {
		m["dpop_signing_alg_values_supported"] = []string{"ES256"}
	}
	writeJSON(w, http.StatusOK, m)
}

func (s *OAuthServer) register(w http.ResponseWriter, r *http.Request) {
	var meta struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	if err := json.NewDecoder(r.Body).Decode(&meta); err != nil || len(meta.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	n := s.registrations.Add(1)
	writeJSON(w, http.StatusCreated, map[string]any{
		"client_id": fmt.Sprintf("client-%d", n), "redirect_uris": meta.RedirectURIs, "token_endpoint_auth_method": "none",
	})
}

// authorize approves at once: what a person clicking "allow" would do.
func (s *OAuthServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("resource") != s.URL {
		http.Error(w, "want response_type=code, PKCE S256 and resource="+s.URL, http.StatusBadRequest)
		return
	}
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || redirect.Scheme != "http" {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	code := rand.Text()
	s.mu.Lock()
	s.codes[code] = pendingCode{challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri")}
	s.mu.Unlock()
	s.authorizations.Add(1)
	v := redirect.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	redirect.RawQuery = v.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func (s *OAuthServer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	var jkt string
	if s.opts.DPoP {
		var ok bool
		if jkt, ok = s.tokenProof(w, r); !ok {
			return
		}
	}
	var ok bool
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		ok = s.spendCode(r.PostForm)
	case "refresh_token":
		time.Sleep(s.opts.RefreshHold)
		ok = r.PostForm.Get("resource") == s.URL && s.refreshBoundTo(r.PostForm.Get("refresh_token"), jkt) && s.spendRefresh(r.PostForm.Get("refresh_token"))
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		ok = s.spendJAG(r) || (s.opts.WorkloadKey != nil && r.PostForm.Get("resource") == s.URL && s.checkWorkload(r.PostForm.Get("assertion")))
	case "client_credentials":
		ok = s.opts.ClientID != "" && r.PostForm.Get("resource") == s.URL && s.clientAuthenticated(r)
	}
	if !ok {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
		return
	}
	access, refresh, tokenType := rand.Text(), rand.Text(), "Bearer"
	s.mu.Lock()
	s.access[access], s.refresh[refresh] = true, true
	if jkt != "" {
		s.bound[access], s.boundRefresh[refresh], tokenType = jkt, jkt, "DPoP"
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": access, "token_type": tokenType, "expires_in": s.opts.ExpiresIn, "refresh_token": refresh,
	})
}

// spendJAG checks a cross-app access grant: an ID-JAG the IdP issued, once,
// from the client in HTTP Basic.
func (s *OAuthServer) spendJAG(r *http.Request) bool {
	id, secret, basic := r.BasicAuth()
	s.mu.Lock()
	defer s.mu.Unlock()
	ok := basic && id == s.opts.ClientID && secret == s.opts.ClientSecret && s.jags[r.PostForm.Get("assertion")]
	delete(s.jags, r.PostForm.Get("assertion"))
	return ok
}

// refreshBoundTo reports whether a refresh token is bound to the key of
// thumbprint jkt ("" for none: a Bearer one); a refusal is recorded.
func (s *OAuthServer) refreshBoundTo(refresh, jkt string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.boundRefresh[refresh] != jkt {
		s.refusals = append(s.refusals, "token endpoint: a refresh token refreshed without a proof of the key it is bound to")
		return false
	}
	return true
}

// spendCode checks an authorization code grant: the code once, its PKCE
// verifier, its redirect URI and the resource.
func (s *OAuthServer) spendCode(form url.Values) bool {
	s.mu.Lock()
	pc, ok := s.codes[form.Get("code")]
	delete(s.codes, form.Get("code"))
	s.mu.Unlock()
	sum := sha256.Sum256([]byte(form.Get("code_verifier")))
	return ok && base64.RawURLEncoding.EncodeToString(sum[:]) == pc.challenge &&
		form.Get("redirect_uri") == pc.redirect && form.Get("resource") == s.URL
}

func (s *OAuthServer) idpMetadata(w http.ResponseWriter, _ *http.Request) {
	idp := s.ts.URL + "/idp"
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer": idp, "authorization_endpoint": idp + "/authorize", "token_endpoint": idp + "/token",
		"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
	})
}

// idpToken is the IdP's token exchange (RFC 8693): the configured ID
// token for an ID-JAG whose audience is the authorization server and
// whose resource is the MCP server.
func (s *OAuthServer) idpToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || s.opts.IDToken == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	f := r.PostForm
	if f.Get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange" || f.Get("subject_token") != s.opts.IDToken ||
		f.Get("requested_token_type") != "urn:ietf:params:oauth:token-type:id-jag" || f.Get("audience") != s.Issuer || f.Get("resource") != s.URL {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
		return
	}
	jag := rand.Text()
	s.mu.Lock()
	s.jags[jag] = true
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": jag, "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A",
	})
}

// clientAuthenticated checks the client of a client credentials request.
func (s *OAuthServer) clientAuthenticated(r *http.Request) bool {
	if a := r.PostForm.Get("client_assertion"); a != "" && s.opts.ClientKey != nil {
		_, err := jwt.Parse(a, func(*jwt.Token) (any, error) { return s.opts.ClientKey, nil },
			jwt.WithAudience(s.Issuer), jwt.WithIssuer(s.opts.ClientID), jwt.WithSubject(s.opts.ClientID), jwt.WithExpirationRequired())
		return err == nil && r.PostForm.Get("client_assertion_type") == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
	}
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	return s.opts.ClientSecret != "" && id == s.opts.ClientID && secret == s.opts.ClientSecret
}

// spendRefresh rotates a refresh token: each is good once.
func (s *OAuthServer) spendRefresh(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.refresh[token] {
		return false
	}
	delete(s.refresh, token)
	s.refreshes.Add(1)
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
