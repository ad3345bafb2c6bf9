package oauth

import (
	"context"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

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
