package oauth

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/mcpbridge/mcpbridge/internal/textcut"
)

// CredentialError is a server that refused a request (401) and offers no
// OAuth to get past it: it publishes no resource metadata and no
// authorization server metadata, so a login cannot help (serve
// --token-env, an API key gateway). It wants a credential of its own,
// sent in a header.
type CredentialError struct {
	// Said is what the server answered: its body, or the refused
	// registration, as peerText.
	Said string
}

func (e *CredentialError) Error() string {
	return "the server wants a credential that OAuth cannot get: pass it with --header 'Authorization: Bearer …' (with --url), or in the entry's headers: " +
		"(it answered 401 Unauthorized, publishes no OAuth metadata, and said: " + e.Said + ")"
}

// offersOAuth reports whether the server at serverURL, which answered a
// request with header, publishes OAuth metadata: its protected resource's,
// or its root's as an authorization server (2025-03-26). A server that
// cannot be asked counts as offering it: only a clear no is a CredentialError.
func offersOAuth(ctx context.Context, client *http.Client, serverURL string, header http.Header) bool {
	challenges, err := oauthex.ParseWWWAuthenticate(header.Values("WWW-Authenticate"))
	if err != nil {
		return true
	}
	prm, found, err := resourceMetadata(ctx, client, serverURL, challenges)
	if err != nil || found {
		return true
	}
	asm, err := auth.GetAuthServerMetadata(ctx, prm.AuthorizationServers[0], client)
	return err != nil || asm != nil
}

// credentialError is the CredentialError of a refusal whose body is resp's
// (read, bounded, and closed).
func credentialError(resp *http.Response) error {
	defer drain(resp)
	body, _ := io.ReadAll(io.LimitReader(resp.Body, textcut.PeerText+1))
	return &CredentialError{Said: peerText(string(body))}
}

// HeaderCredentialError is a server that refused (401) or forbade (403) a
// request carrying the credential the user gave in an Authorization header
// of their own. A login cannot help: that header is what is sent. The
// header's value is never part of the error.
type HeaderCredentialError struct {
	Status int
	// Said is the error and error_description of the server's
	// WWW-Authenticate, as peerText; "" when it gave none.
	Said string
}

func (e *HeaderCredentialError) Error() string {
	status := fmt.Sprintf("%d %s", e.Status, http.StatusText(e.Status))
	if e.Said != "" {
		status += ": " + e.Said
	}
	where := "in --header 'Authorization: …' (with --url), or in the entry's headers"
	if e.Status == http.StatusForbidden {
		return "the server forbade the request made with the credential given in the Authorization header (" + status +
			"): it may lack a permission or scope the server wants; give one that has it " + where
	}
	return "the server refused the credential given in the Authorization header (" + status + "): correct it " + where
}

// HeaderHandler is the OAuth handler of a server the user authorizes with
// an Authorization header of their own (and no oauth block): it adds no
// token, and turns a refusal into a HeaderCredentialError, which the SDK
// would otherwise report as a bare "Unauthorized".
func HeaderHandler() auth.OAuthHandler { return headerHandler{} }

type headerHandler struct{}

func (headerHandler) TokenSource(context.Context) (oauth2.TokenSource, error) { return nil, nil }

func (headerHandler) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	defer drain(resp)
	return &HeaderCredentialError{Status: resp.StatusCode, Said: challengeError(resp.Header)}
}

// challengeError is "error: error_description" of the first challenge of
// header's WWW-Authenticate that has either (RFC 6750 §3), as peerText;
// "" when none has.
func challengeError(header http.Header) string {
	challenges, _ := oauthex.ParseWWWAuthenticate(header.Values("WWW-Authenticate"))
	for _, c := range challenges {
		var said []string
		for _, p := range []string{c.Params["error"], c.Params["error_description"]} {
			if p != "" {
				said = append(said, p)
			}
		}
		if len(said) > 0 {
			return peerText(strings.Join(said, ": "))
		}
	}
	return ""
}
