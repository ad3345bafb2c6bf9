package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"
)

// dpopHandler wraps a grant's handler: the tokens its source hands out are
// noted, so that the resource transport presents a DPoP-bound one with
// the DPoP scheme and a proof.
type dpopHandler struct {
	auth.OAuthHandler
	d      *dpop
	origin string // the MCP server's, the only one its tokens go to
}

var _ auth.OAuthHandler = (*dpopHandler)(nil)

func (h *dpopHandler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	ts, err := h.OAuthHandler.TokenSource(ctx)
	if err != nil || ts == nil {
		return ts, err
	}
	return tokenSourceFunc(func() (*oauth2.Token, error) {
		tok, err := ts.Token()
		if err == nil {
			h.d.note(tok)
		}
		return tok, err
	}), nil
}

// Authorize refuses, as the server's fault, a use_dpop_nonce challenge to
// a request of a bound token: the resource transport has already sent it
// again with the challenge's nonce, and was refused with another. The
// grant is sound, so neither a refresh nor a login is started.
func (h *dpopHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if token, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok && h.d.isBound(token) && rsNonceChallenge(resp) {
		drain(resp)
		return fmt.Errorf("the MCP server at %s answered use_dpop_nonce again to a proof with the nonce it had just given: it takes none of its own nonces, which no login or refresh can fix; its operator must", h.origin)
	}
	return h.OAuthHandler.Authorize(ctx, req, resp)
}

// Transport is the HTTP stack of the connection h authorizes, over base:
// a token goes to the MCP server's origin only (a redirect elsewhere is
// followed without it), a DPoP-bound one with the DPoP scheme and a
// fresh proof, and a resource server's use_dpop_nonce challenge is
// answered once, with its nonce. A handler NewHandler did not build
// leaves base as it is.
func Transport(h auth.OAuthHandler, base http.RoundTripper) http.RoundTripper {
	dh, ok := h.(*dpopHandler)
	if !ok {
		return base
	}
	if base == nil {
		base = http.DefaultTransport
	}
	return &dpopResource{d: dh.d, base: base, origin: dh.origin}
}

// dpopResource is the transport of requests to the MCP server.
type dpopResource struct {
	d      *dpop
	base   http.RoundTripper
	origin string
}

func (rt *dpopResource) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Authorization") != "" && origin(req.URL) != rt.origin {
		// A redirect: net/http keeps Authorization for the same host name
		// whatever the port or scheme (another service, or cleartext).
		req = req.Clone(req.Context())
		req.Header.Del("Authorization")
	}
	token, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if !ok || !rt.d.isBound(token) {
		resp, err := rt.base.RoundTrip(req)
		if err == nil {
			rt.d.noteNonce(req.URL, resp.Header)
			rt.d.noteChallenge(resp)
		}
		return resp, err
	}
	return withNonce(req, func(r *http.Request) (*http.Response, error) { return rt.d.send(rt.base, r, token) }, rsNonceChallenge)
}

// withNonce sends req, and once more (with the nonce send has noted) when
// the answer is a challenge to use one. Once: a server that wants yet
// another nonce is refused, not looped on.
func withNonce(req *http.Request, send func(*http.Request) (*http.Response, error), challenge func(*http.Response) bool) (*http.Response, error) {
	resp, err := send(req)
	if err != nil || !challenge(resp) {
		return resp, err
	}
	retry, err := rewind(req)
	if err != nil {
		return resp, nil // untested: the SDK's and the oauth2 package's requests can all be replayed
	}
	drain(resp)
	return send(retry)
}

// send sends req through base with a fresh proof, and with a resource
// request's token under the DPoP scheme (token "" for a token request),
// and notes the nonce the answer carries.
func (d *dpop) send(base http.RoundTripper, req *http.Request, token string) (*http.Response, error) {
	proof, err := d.proof(req, token)
	if err != nil {
		return nil, err
	}
	r := req.Clone(req.Context())
	if token != "" {
		r.Header.Set("Authorization", dpopScheme+" "+token)
	}
	r.Header.Set("DPoP", proof)
	resp, err := base.RoundTrip(r)
	if err == nil {
		d.noteNonce(req.URL, resp.Header)
	}
	return resp, err
}

// rsNonceChallenge reports a resource server's demand for a nonce (RFC
// 9449 §9): a 401 whose DPoP challenge says use_dpop_nonce, with the nonce.
func rsNonceChallenge(resp *http.Response) bool {
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("DPoP-Nonce") == "" {
		return false
	}
	c, ok := dpopChallenge(resp.Header)
	return ok && c.Params["error"] == "use_dpop_nonce"
}

// dpopTokens is the transport of requests to authorization servers (and
// for metadata): while DPoP is on, each token request carries a fresh
// proof, and an authorization server's use_dpop_nonce answer is retried
// once, with its nonce (RFC 9449 §5, §8). Protected resource metadata
// that requires DPoP-bound tokens turns DPoP on.
type dpopTokens struct {
	d    *dpop
	base http.RoundTripper
}

func (rt *dpopTokens) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/.well-known/oauth-protected-resource") {
		resp, err := rt.base.RoundTrip(req)
		if err == nil {
			rt.d.noteResourceMetadata(resp)
		}
		return resp, err
	}
	if !rt.d.active() || !isTokenRequest(req) {
		return rt.base.RoundTrip(req)
	}
	return withNonce(req, func(r *http.Request) (*http.Response, error) { return rt.d.send(rt.base, r, "") }, asNonceChallenge)
}

// isTokenRequest tells a token request (a form POST with a grant_type)
// from the other requests to an authorization server (metadata,
// registration, the authorization URL). A token exchange at an IdP is
// not one: its token is not for the MCP server.
func isTokenRequest(req *http.Request) bool {
	if req.Method != http.MethodPost || req.GetBody == nil ||
		!strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		return false
	}
	body, err := req.GetBody()
	if err != nil {
		return false
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, 1<<20))
	if err != nil {
		return false
	}
	form, err := url.ParseQuery(string(data))
	g := form.Get("grant_type")
	return err == nil && g != "" && g != "urn:ietf:params:oauth:grant-type:token-exchange"
}

// asNonceChallenge reports an authorization server's demand for a nonce:
// a 400 with error use_dpop_nonce and the nonce in DPoP-Nonce. The body
// it reads is put back.
func asNonceChallenge(resp *http.Response) bool {
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("DPoP-Nonce") == "" {
		return false
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(data))
	var e struct {
		Error string `json:"error"`
	}
	return json.Unmarshal(data, &e) == nil && e.Error == "use_dpop_nonce"
}

// rewind is req again, with its body from the start.
func rewind(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.Body == nil || req.Body == http.NoBody {
		return r, nil
	}
	if req.GetBody == nil {
		return nil, errors.New("the request body cannot be sent again") // untested: see the callers
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	r.Body = body
	return r, nil
}
