package oauth

import (
	"context"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"

	"github.com/mcpbridge/mcpbridge/internal/errtext"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/internal/textcut"
)

// peerText is an authorization server's text (an error_description, a
// status line, a response body) as an error or a log line quotes it: its
// control and hiding characters escaped, so that a terminal obeys none of
// them and a line break forges no line, and cut to textcut.PeerText, since
// the server sizes it. The line break a body ends with is no part of it.
func peerText(s string) string {
	return textcut.Peer(termsafe.Line(strings.TrimRight(s, "\r\n")))
}

// peerError is err with its text made peerText; errors.As still finds
// what it wraps (the SDK tells an invalid_grant by its RetrieveError).
func peerError(err error) error { return errtext.Map(err, peerText) }

// peerErrors is a grant's handler whose errors leave it through peerError:
// the oauth2 package and the SDK quote an authorization server's answer
// in theirs (a refused registration's body, a token endpoint's text),
// whole and as sent.
type peerErrors struct {
	h auth.OAuthHandler
}

func (p peerErrors) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	return peerError(p.h.Authorize(ctx, req, resp))
}

func (p peerErrors) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	ts, err := p.h.TokenSource(ctx)
	if err != nil || ts == nil {
		return ts, peerError(err)
	}
	return tokenSourceFunc(func() (*oauth2.Token, error) {
		tok, err := ts.Token()
		return tok, peerError(err)
	}), nil
}
