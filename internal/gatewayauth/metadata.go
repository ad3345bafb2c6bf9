package gatewayauth

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// metadataPath is where RFC 9728 puts a resource's metadata.
const metadataPath = "/.well-known/oauth-protected-resource"

// metadataURL is the metadata URL of the resource (its path-suffixed
// form, RFC 9728 §3.1, when the resource has a path); "" when resource is
// not a URL.
func metadataURL(resource string) string {
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host + metadataPath + strings.TrimSuffix(u.EscapedPath(), "/")
}

// WellKnown serves the Protected Resource Metadata (RFC 9728) of the
// applied config at /.well-known/oauth-protected-resource and at its
// path-suffixed form; 404 for every other path, and while no issuer is
// configured.
func (k *Keeper) WellKnown() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := k.state.Load()
		if st == nil || !st.cfg.Auth.JWT() || !metadataPathOf(r.URL.Path, st.cfg.Auth.Audience) {
			http.NotFound(w, r)
			return
		}
		a := st.cfg.Auth
		auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource:               a.Audience,
			AuthorizationServers:   []string{a.Issuer},
			ScopesSupported:        a.Scopes,
			BearerMethodsSupported: []string{"header"},
			ResourceName:           "mcpbridge",
		}).ServeHTTP(w, r)
	})
}

// metadataPathOf reports whether p is the metadata path, bare or suffixed
// with the resource's path.
func metadataPathOf(p, resource string) bool {
	if p == metadataPath {
		return true
	}
	u, err := url.Parse(resource)
	return err == nil && u.Path != "" && p == metadataPath+strings.TrimSuffix(u.Path, "/")
}
