package oauth

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// discovery is what the grants the SDK does not implement learn before
// asking for a token: the protected resource metadata, the authorization
// server's metadata, and the scopes to request.
type discovery struct {
	prm    *oauthex.ProtectedResourceMetadata
	asm    *oauthex.AuthServerMeta
	scopes []string
}

// discover follows the spec's discovery from a 401 or 403 response to a
// request to serverURL: the resource metadata named in WWW-Authenticate,
// else at the well-known paths (the endpoint's, then the root's); else the
// 2025-03-26 fallback, where the server's root is the authorization
// server. Scopes: configured, else the challenge's, else the metadata's
// scopes_supported, else none.
func discover(ctx context.Context, client *http.Client, serverURL string, resp *http.Response, configured []string, pinned string) (*discovery, error) {
	challenges, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return nil, fmt.Errorf("parsing WWW-Authenticate: %w", err)
	}
	prm, _, err := resourceMetadata(ctx, client, serverURL, challenges)
	if err != nil {
		return nil, err
	}
	issuer, err := chooseIssuer(prm.AuthorizationServers, pinned)
	if err != nil {
		return nil, err
	}
	asm, err := auth.GetAuthServerMetadata(ctx, issuer, client)
	if err != nil {
		return nil, fmt.Errorf("authorization server metadata: %w", err)
	}
	if asm == nil { // 2025-03-26: default endpoints
		asm = &oauthex.AuthServerMeta{Issuer: issuer, AuthorizationEndpoint: issuer + "/authorize", TokenEndpoint: issuer + "/token", RegistrationEndpoint: issuer + "/register"}
	}
	d := &discovery{prm: prm, asm: asm, scopes: configured}
	if len(d.scopes) == 0 {
		d.scopes = challengeScopes(challenges)
	}
	if len(d.scopes) == 0 {
		d.scopes = prm.ScopesSupported
	}
	return d, nil
}

// resourceMetadata finds the protected resource metadata of serverURL;
// found is false for the 2025-03-26 fallback (none is served).
func resourceMetadata(ctx context.Context, client *http.Client, serverURL string, challenges []oauthex.Challenge) (_ *oauthex.ProtectedResourceMetadata, found bool, _ error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return nil, false, fmt.Errorf("server URL: %w", err)
	}
	root := *u
	root.Path, root.RawPath, root.RawQuery, root.Fragment = "", "", "", ""
	type try struct{ url, resource string }
	var tries []try
	for _, c := range challenges {
		if m := c.Params["resource_metadata"]; m != "" {
			tries = append(tries, try{m, serverURL})
			break
		}
	}
	tries = append(tries,
		try{root.String() + "/.well-known/oauth-protected-resource/" + strings.TrimLeft(u.Path, "/"), serverURL},
		try{root.String() + "/.well-known/oauth-protected-resource", root.String()})
	for _, t := range tries {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, t.url, t.resource, client)
		if err != nil || prm == nil {
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, true, fmt.Errorf("the protected resource metadata at %s names no authorization server", t.url)
		}
		return prm, true, nil
	}
	return &oauthex.ProtectedResourceMetadata{AuthorizationServers: []string{root.String()}, Resource: serverURL}, false, nil
}

func challengeScopes(cs []oauthex.Challenge) []string {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["scope"] != "" {
			return strings.Fields(c.Params["scope"])
		}
	}
	return nil
}

// authStyle is how to present a client secret at the token endpoint, from
// the methods the server supports: client_secret_post, else
// client_secret_basic, else let the oauth2 package find out.
func authStyle(supported []string) oauth2.AuthStyle {
	switch {
	case slices.Contains(supported, "client_secret_post"):
		return oauth2.AuthStyleInParams
	case slices.Contains(supported, "client_secret_basic"):
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleAutoDetect
}

// drain reads (a bounded part of) and closes a response body the handler
// is responsible for.
func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
}

// chooseIssuer is the authorization server of named, the ones the MCP
// server's metadata names: the first, or pinned (oauth.issuer) when set,
// which must be among them. The credentials go to that server: one the
// MCP server chose alone could be anyone's.
func chooseIssuer(named []string, pinned string) (string, error) {
	if pinned == "" {
		return named[0], nil
	}
	for _, n := range named {
		if sameIssuer(n, pinned) {
			return n, nil
		}
	}
	return "", fmt.Errorf("the MCP server names the authorization server %s, not oauth.issuer %s: no credential was sent (if the server moved, set oauth.issuer to the new one)", strings.Join(named, ", "), pinned)
}

// sameIssuer compares issuers as the SDK does for a pre-registered
// client's (a trailing slash aside), so that every flow agrees.
func sameIssuer(a, b string) bool {
	return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
}
