package sdkwire

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"
)

// spyOAuth is an auth.OAuthHandler whose token source fails with its err
// and whose Authorize fails with authErr, counting the calls.
type spyOAuth struct {
	tokenErr   error
	authErr    error
	authorized atomic.Int32
}

func (h *spyOAuth) TokenSource(context.Context) (oauth2.TokenSource, error) {
	return tokenErrSource{h.tokenErr}, nil
}

func (h *spyOAuth) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	resp.Body.Close()
	h.authorized.Add(1)
	return h.authErr
}

type tokenErrSource struct{ err error }

func (s tokenErrSource) Token() (*oauth2.Token, error) { return nil, s.err }

var errSpyLogin = errors.New("spy: needs a login")

// Assumption 21.
func TestContractOAuthHandler(t *testing.T) {
	var withAuth atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			withAuth.Add(1)
		}
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://127.0.0.1/prm"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	defer srv.Close()
	h := &spyOAuth{tokenErr: &oauth2.RetrieveError{ErrorCode: "invalid_grant"}, authErr: errSpyLogin}
	client := mcp.NewClient(&mcp.Implementation{Name: "contract", Version: "0"}, nil)
	_, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL, OAuthHandler: h, MaxRetries: -1}, nil)
	if !errors.Is(err, errSpyLogin) {
		t.Errorf("Connect: %v; want it to wrap Authorize's error", err)
	}
	if n := h.authorized.Load(); n < 1 {
		t.Errorf("Authorize called %d times; want it called on the 401", n)
	}
	if n := withAuth.Load(); n != 0 {
		t.Errorf("%d requests carried Authorization; an invalid_grant token source must send none", n)
	}
	h2 := &spyOAuth{tokenErr: errors.New("token endpoint down")}
	_, err = client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL, OAuthHandler: h2, MaxRetries: -1}, nil)
	if err == nil || h2.authorized.Load() != 0 {
		t.Errorf("Connect with a failing token source: %v, %d authorizations; want the request not sent", err, h2.authorized.Load())
	}
}

var _ auth.OAuthHandler = (*spyOAuth)(nil)
