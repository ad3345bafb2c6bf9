package gatewayauth

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// discoverJWKS finds the issuer's jwks_uri: RFC 8414 metadata first (with
// path insertion for an issuer with a path), then OpenID Connect
// discovery, as the MCP authorization spec orders them. The go-sdk's
// GetAuthServerMetadata is for clients: it requires PKCE and refuses
// private addresses, which an on-premises issuer has.
func discoverJWKS(ctx context.Context, issuer string, c *http.Client) (string, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return "", err
	}
	p := strings.TrimSuffix(u.Path, "/")
	base := u.Scheme + "://" + u.Host
	candidates := []string{base + "/.well-known/oauth-authorization-server" + p}
	if p != "" {
		candidates = append(candidates, base+"/.well-known/openid-configuration"+p)
	}
	candidates = append(candidates, base+p+"/.well-known/openid-configuration")
	var tried []string
	for _, c2 := range candidates {
		meta, status, err := getMeta(ctx, c, c2)
		switch {
		case err != nil:
			return "", fmt.Errorf("%s: %w", c2, err)
		case status/100 == 4:
			tried = append(tried, fmt.Sprintf("%s (%d)", c2, status))
			continue
		case status != http.StatusOK:
			return "", fmt.Errorf("%s: HTTP %d", c2, status)
		case meta.Issuer != issuer:
			// Exactly (RFC 8414 §3.3), as each token's iss is compared:
			// one differing by a trailing slash would pass here and then
			// have every token refused.
			return "", fmt.Errorf("%s: its issuer is %q, and auth.issuer is %q: write auth.issuer exactly as the metadata has it (the iss of its tokens), trailing slash and all", c2, meta.Issuer, issuer)
		case meta.JWKSURI == "":
			return "", fmt.Errorf("%s: no jwks_uri", c2)
		case !httpURL(meta.JWKSURI):
			// As a configured jwksUrl: keys fetched in plaintext could be
			// replaced by anyone on the path, and tokens signed by theirs.
			return "", fmt.Errorf("%s: its jwks_uri %q is not an https URL (http only for a loopback host), so the signing keys would be fetched in plaintext: fix the issuer's metadata, or set auth.jwksUrl to the https URL of its keys", c2, meta.JWKSURI)
		}
		return meta.JWKSURI, nil
	}
	return "", fmt.Errorf("no metadata found at %s", strings.Join(tried, ", "))
}

type serverMeta struct {
	Issuer  string `json:"issuer"`
	JWKSURI string `json:"jwks_uri"`
}

func getMeta(ctx context.Context, c *http.Client, u string) (serverMeta, int, error) {
	var m serverMeta
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return m, 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return m, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return m, resp.StatusCode, nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&m); err != nil {
		return m, 0, fmt.Errorf("decoding the metadata: %w", err)
	}
	return m, http.StatusOK, nil
}

// defaultClient fetches metadata and keys with a bounded wait.
func defaultClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 10 * time.Second}).DialContext
	return &http.Client{Timeout: 10 * time.Second, Transport: t}
}
