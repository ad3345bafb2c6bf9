package oauth

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Mode says what an authorization that needs a person does.
type Mode int

const (
	// ModeNoLogin never blocks on a person: the attempt fails with a
	// NeedsLoginError (tools, call, status, serve). The zero value.
	ModeNoLogin Mode = iota
	// ModeHeadless fetches the authorization URL and takes the code from
	// its redirect: for authorization servers that approve without a
	// person (test and CI servers; --oauth-headless).
	ModeHeadless
	// ModeLogin runs a login: Options.Callback receives the code on a
	// loopback redirect after the person approved in a browser.
	ModeLogin
)

// Options are the bridge-wide settings of authorization; the zero value
// never blocks and keeps tokens in memory only.
type Options struct {
	Mode Mode
	// StateDir is where tokens are stored (see StateDir); "" keeps them in
	// memory, for the connection attempt only.
	StateDir string
	// Callback receives the code in ModeLogin; required there.
	Callback *Callback
	// HTTPClient talks to authorization servers; nil means one with a 30 s
	// timeout per request.
	HTTPClient *http.Client
	// Logger receives warnings (a failed refresh, a failed store); nil
	// discards them.
	Logger *slog.Logger
	// LookupEnv reads the environment (oauth.assertionEnv); nil means
	// os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// Target is the server being authorized.
type Target struct {
	// ServerName names it in messages (mcpbridge login NAME).
	ServerName string
	// URL is its MCP endpoint, the resource of its tokens.
	URL string
}

// NeedsLoginError is the failure of an authorization that needs a person
// where none may be asked (ModeNoLogin).
type NeedsLoginError struct {
	Server string
}

func (e *NeedsLoginError) Error() string { return "needs a login: run " + e.Command() }

// Command is the command that logs in.
func (e *NeedsLoginError) Command() string { return "mcpbridge login " + e.Server }

// redirectHeadless is the redirect URI of a headless authorization: it is
// never contacted (the code is read from the Location header).
const redirectHeadless = "http://127.0.0.1/callback"

// authTimeout bounds one request to an authorization server.
const authTimeout = 30 * time.Second

// NewHandler builds the OAuth handler of one connection attempt to t,
// following cfg (nil: discovery and dynamic registration only). The
// connection's HTTP stack goes through Transport(handler, ...), which
// presents DPoP-bound tokens.
func NewHandler(cfg *Config, t Target, opts Options) (auth.OAuthHandler, error) {
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: authTimeout}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, fmt.Errorf("oauth: the server URL: %w", err) // untested: the config's URL is checked when loaded
	}
	d := newDPoP(cfg != nil && cfg.DPoP)
	base := opts.HTTPClient.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	client := *opts.HTTPClient
	client.Transport = &dpopTokens{d: d, base: base}
	opts.HTTPClient = &client
	h, err := newGrant(cfg, t, opts, d)
	if err != nil {
		return nil, err
	}
	return &dpopHandler{OAuthHandler: peerErrors{h}, d: d, origin: origin(u)}, nil
}

func newGrant(cfg *Config, t Target, opts Options, d *dpop) (auth.OAuthHandler, error) {
	switch cfg.grant() {
	case GrantClientCredentials:
		return newClientCredentials(cfg, t, opts)
	case GrantCrossAppAccess:
		return newCrossApp(cfg, t, opts.HTTPClient), nil
	case GrantJWTBearer:
		return newJWTBearer(cfg, t, opts), nil
	}
	return newAuthorizationCode(cfg, t, opts, d)
}
