package oauth

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"

	"github.com/mcpbridge/mcpbridge/internal/loopback"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// The 2025-03-26 revision of the MCP spec has no protected resource
// metadata: the server's root is the authorization base URL, and its
// metadata (RFC 8414) is read from the root's well-known path, its issuer
// not required to be the root. The go-sdk insists on RFC 8414's issuer
// match and refuses such a server; for it alone (no resource metadata,
// root metadata with another issuer) the bridge runs the same flow itself:
// registration, PKCE S256, the resource indicator in both requests, the
// response's iss checked (RFC 9207).

// legacyMetadata returns the root metadata of a 2025-03-26 server whose
// issuer the SDK refused; ok is false for any other failure.
func (h *codeHandler) legacyMetadata(ctx context.Context, header http.Header) (_ *oauthex.AuthServerMeta, ok bool) {
	challenges, err := oauthex.ParseWWWAuthenticate(header.Values("WWW-Authenticate"))
	if err != nil {
		return nil, false
	}
	prm, found, err := resourceMetadata(ctx, h.hc.Client, h.target.URL, challenges)
	if err != nil || found {
		return nil, false
	}
	root := prm.AuthorizationServers[0]
	asm, err := getMetadata(ctx, h.hc.Client, root+"/.well-known/oauth-authorization-server")
	if err != nil || asm.Issuer == root {
		return nil, false
	}
	return asm, true
}

// getMetadata reads authorization server metadata without RFC 8414's
// issuer check, but with the SDK's rule for its endpoints (safeEndpoint).
func getMetadata(ctx context.Context, client *http.Client, u string) (*oauthex.AuthServerMeta, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer drain(resp)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", u, resp.Status)
	}
	var asm oauthex.AuthServerMeta
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&asm); err != nil {
		return nil, fmt.Errorf("%s: %w", u, err)
	}
	for _, e := range []struct{ name, url string }{
		{"authorization_endpoint", asm.AuthorizationEndpoint},
		{"token_endpoint", asm.TokenEndpoint},
		{"registration_endpoint", asm.RegistrationEndpoint},
	} {
		if problem := safeEndpoint(e.url, e.name != "registration_endpoint"); problem != "" {
			return nil, fmt.Errorf("%s: the %s %q %s", u, e.name, e.url, problem)
		}
	}
	return &asm, nil
}

// safeEndpoint says what is wrong with u as an authorization server's
// endpoint, "" when nothing is (or when u is "" and not required): the
// rule the SDK applies to the metadata it reads itself. The code, the
// PKCE verifier, a client secret and every refresh token go there, so
// it must be https (http only on this machine), and not an address of
// a private network written out (a hostile server's way to reach one).
func safeEndpoint(u string, required bool) string {
	if u == "" && !required {
		return ""
	}
	p, err := url.Parse(u)
	switch {
	case err != nil || p.Host == "" || (p.Scheme != "https" && p.Scheme != "http"):
		return "is not an http(s) URL"
	case p.Scheme == "http" && !loopback.Host(p.Hostname()):
		return "is http:// to another machine: the authorization server must use https"
	}
	if ip, err := netip.ParseAddr(p.Hostname()); err == nil && privateOrReserved(ip) {
		return "is a private or reserved address"
	}
	return ""
}

// cgnat is the shared address space of carrier-grade NAT (RFC 6598).
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// privateOrReserved reports an address of a private network, link-local
// (a cloud's metadata service), multicast or unspecified: never an
// authorization server's, as the SDK decides.
func privateOrReserved(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsMulticast() || ip.IsUnspecified() || cgnat.Contains(ip)
}

// legacyAuthorize runs the authorization code flow against asm.
func (h *codeHandler) legacyAuthorize(ctx context.Context, asm *oauthex.AuthServerMeta, header http.Header) error {
	oc, err := h.legacyClient(ctx, asm)
	if err != nil {
		return err
	}
	oc.Scopes = h.scopes
	if len(oc.Scopes) == 0 {
		challenges, _ := oauthex.ParseWWWAuthenticate(header.Values("WWW-Authenticate"))
		oc.Scopes = challengeScopes(challenges)
	}
	verifier, state := oauth2.GenerateVerifier(), rand.Text()
	resource := oauth2.SetAuthURLParam("resource", h.target.URL)
	res, err := h.hc.AuthorizationCodeFetcher(ctx, &auth.AuthorizationArgs{URL: oc.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), resource)})
	if err != nil {
		return err
	}
	if res.State != state {
		return errors.New("authorization: the browser's redirect carried a state that is not this login's (from an earlier or a second login tab, or a forged redirect), so nothing was authorized: run the login again and finish it in the tab it opens")
	}
	// RFC 9207, as the SDK checks it: a response naming another issuer is
	// another authorization server's (a mix-up).
	if res.Iss != "" && res.Iss != asm.Issuer || res.Iss == "" && asm.AuthorizationResponseIssParameterSupported {
		return fmt.Errorf("authorization: the response names the issuer %q, not the authorization server's %q: it is another server's response", res.Iss, asm.Issuer)
	}
	tok, err := oc.Exchange(context.WithValue(ctx, oauth2.HTTPClient, h.hc.Client), res.Code, oauth2.VerifierOption(verifier), resource)
	if err != nil {
		return fmt.Errorf("token exchange failed: %w", err)
	}
	refreshCtx := context.WithValue(context.Background(), oauth2.HTTPClient, h.hc.Client)
	ts := oc.TokenSource(refreshCtx, tok)
	if h.hc.NewTokenSource != nil {
		if ts, err = h.hc.NewTokenSource(refreshCtx, oc, tok); err != nil {
			return err // untested: the store's NewTokenSource never fails
		}
	}
	h.setLegacy(ts)
	return nil
}

// legacyClient is the client of the legacy flow: pre-registered, else
// registered dynamically.
func (h *codeHandler) legacyClient(ctx context.Context, asm *oauthex.AuthServerMeta) (*oauth2.Config, error) {
	oc := &oauth2.Config{
		Endpoint:    oauth2.Endpoint{AuthURL: asm.AuthorizationEndpoint, TokenURL: asm.TokenEndpoint},
		RedirectURL: h.hc.RedirectURL,
	}
	if pre := h.hc.PreregisteredClient; pre != nil {
		if _, err := chooseIssuer([]string{asm.Issuer}, pre.Issuer); err != nil {
			return nil, err
		}
		oc.ClientID, oc.Endpoint.AuthStyle = pre.ClientID, authStyle(asm.TokenEndpointAuthMethodsSupported)
		if pre.ClientSecretAuth != nil {
			oc.ClientSecret = pre.ClientSecretAuth.ClientSecret
		}
		return oc, nil
	}
	if asm.RegistrationEndpoint == "" {
		return nil, errors.New("the authorization server offers no dynamic client registration: set oauth.clientId")
	}
	reg, err := oauthex.RegisterClient(ctx, asm.RegistrationEndpoint, h.hc.DynamicClientRegistrationConfig.Metadata, h.hc.Client)
	if err != nil {
		return nil, fmt.Errorf("registering a client: %w", err)
	}
	oc.ClientID, oc.ClientSecret = reg.ClientID, reg.ClientSecret
	oc.Endpoint.AuthStyle = oauth2.AuthStyleInHeader // RFC 7591's default, client_secret_basic
	if m := reg.TokenEndpointAuthMethod; m == "client_secret_post" || m == "none" {
		oc.Endpoint.AuthStyle = oauth2.AuthStyleInParams
	}
	return oc, nil
}
