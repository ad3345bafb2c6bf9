package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/textcut"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Without a person (the default mode), a server that wants OAuth fails
// with NeedsLoginError before any client is registered.
func TestNoLoginNeedsLogin(t *testing.T) {
	srv := newServer(t, mcptest.OAuthOptions{})
	err := connect(t, srv, nil, Options{StateDir: t.TempDir()})
	var nl *NeedsLoginError
	if !errors.As(err, &nl) || nl.Server != "srv" {
		t.Fatalf("connect: %v, want a NeedsLoginError for srv", err)
	}
	if want := "needs a login: run mcpbridge login srv"; nl.Error() != want {
		t.Errorf("message %q, want %q", nl.Error(), want)
	}
	if n := srv.Registrations(); n != 0 {
		t.Errorf("%d client registrations, want none", n)
	}
}

// A headless authorization registers a client, stores the grant, and a
// later attempt (another process) uses the stored token without a login.
func TestHeadlessThenStored(t *testing.T) {
	srv := newServer(t, mcptest.OAuthOptions{})
	dir := t.TempDir()
	if err := connect(t, srv, nil, Options{Mode: ModeHeadless, StateDir: dir}); err != nil {
		t.Fatalf("headless: %v", err)
	}
	if err := connect(t, srv, nil, Options{StateDir: dir}); err != nil {
		t.Fatalf("with the stored token: %v", err)
	}
	if r, a := srv.Registrations(), srv.Authorizations(); r != 1 || a != 1 {
		t.Errorf("%d registrations, %d authorizations; want 1 each", r, a)
	}
	checkModes(t, dir)
	srv.RevokeAll()
	var nl *NeedsLoginError
	if err := connect(t, srv, nil, Options{StateDir: dir}); !errors.As(err, &nl) {
		t.Errorf("after revocation: %v, want NeedsLoginError", err)
	}
}

// checkModes checks the store's modes: 0700 directories, 0600 files.
func checkModes(t *testing.T, stateDir string) {
	t.Helper()
	files := 0
	err := filepath.WalkDir(stateDir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := os.FileMode(0o600)
		if d.IsDir() {
			want = 0o700 | os.ModeDir
		} else {
			files++
		}
		if info.Mode() != want && path != stateDir {
			t.Errorf("%s: mode %v, want %v", path, info.Mode(), want)
		}
		return nil
	})
	if err != nil || files == 0 {
		t.Fatalf("walking the store: %v (%d files)", err, files)
	}
}

// A token the authorization server says expires at once is refreshed on
// the next attempt, and the refreshed one is stored.
func TestRefreshOnNextAttempt(t *testing.T) {
	srv := newServer(t, mcptest.OAuthOptions{ExpiresIn: 1})
	dir := t.TempDir()
	if err := connect(t, srv, nil, Options{Mode: ModeHeadless, StateDir: dir}); err != nil {
		t.Fatalf("headless: %v", err)
	}
	before := srv.Refreshes()
	if err := connect(t, srv, nil, Options{StateDir: dir}); err != nil {
		t.Fatalf("with the stored token: %v", err)
	}
	if srv.Refreshes() <= before || srv.Authorizations() != 1 {
		t.Errorf("refreshes %d→%d, authorizations %d: want a refresh and no new login", before, srv.Refreshes(), srv.Authorizations())
	}
	// A refresh the server refuses (invalid_grant) ends in needs-login.
	srv.RevokeAll()
	var nl *NeedsLoginError
	if err := connect(t, srv, nil, Options{StateDir: dir}); !errors.As(err, &nl) {
		t.Errorf("after a refused refresh: %v, want NeedsLoginError", err)
	}
}

// An access token the server refuses before the clock says it expired
// (revoked early, or issued without expires_in) is replaced by one
// refresh with the stored refresh token, without a login; a server that
// refuses everything still ends in needs-login, after that one try. A
// 401 used to go straight to needs-login, a working refresh token at hand.
func TestRefusedTokenRefreshedOnce(t *testing.T) {
	srv := newServer(t, mcptest.OAuthOptions{})
	dir := t.TempDir()
	if err := connect(t, srv, nil, Options{Mode: ModeHeadless, StateDir: dir}); err != nil {
		t.Fatalf("headless: %v", err)
	}
	srv.RevokeAccess()
	if err := connect(t, srv, nil, Options{StateDir: dir}); err != nil {
		t.Fatalf("after the access token was revoked: %v, want a refresh", err)
	}
	if r, a := srv.Refreshes(), srv.Authorizations(); r != 1 || a != 1 {
		t.Errorf("%d refreshes, %d authorizations: want one refresh and no new login", r, a)
	}
	srv.RevokeAll()
	var nl *NeedsLoginError
	if err := connect(t, srv, nil, Options{StateDir: dir}); !errors.As(err, &nl) {
		t.Errorf("after the grant was revoked: %v, want NeedsLoginError", err)
	}
	if r := srv.Refreshes(); r != 1 {
		t.Errorf("%d refreshes in all, want 1: none for the revoked grant", r)
	}
}

// A login receives the code on the loopback callback, where the browser
// lands after following the authorization server's redirect.
func TestLoginCallback(t *testing.T) {
	srv := newServer(t, mcptest.OAuthOptions{})
	var shown strings.Builder
	cb, err := ListenCallback(0, "srv", &shown, browse(t))
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	if err := connect(t, srv, &Config{CallbackPort: 0}, Options{Mode: ModeLogin, StateDir: t.TempDir(), Callback: cb}); err != nil {
		t.Fatalf("login: %v", err)
	}
	if !strings.Contains(shown.String(), "To log in to srv, open this URL") || !strings.Contains(shown.String(), srv.Issuer+"/authorize?") {
		t.Errorf("shown: %q", shown.String())
	}
	if !strings.HasPrefix(cb.RedirectURL(), "http://127.0.0.1:") {
		t.Errorf("redirect URL %q", cb.RedirectURL())
	}
}

// A callback that was never used closes cleanly.
func TestCallbackUnused(t *testing.T) {
	cb, err := ListenCallback(0, "srv", &strings.Builder{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cb.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := ListenCallback(-1, "srv", nil, nil); err == nil {
		t.Error("ListenCallback(-1) succeeded")
	}
}

// A 2025-03-26 server, whose root metadata names another issuer than the
// root, is authorized by the bridge's own flow; the token is stored like
// any other.
func TestLegacyServer(t *testing.T) {
	srv := newServer(t, mcptest.OAuthOptions{Legacy: true})
	dir := t.TempDir()
	if err := connect(t, srv, nil, Options{Mode: ModeHeadless, StateDir: dir}); err != nil {
		t.Fatalf("headless: %v", err)
	}
	if err := connect(t, srv, nil, Options{StateDir: dir}); err != nil {
		t.Fatalf("with the stored token: %v", err)
	}
	if r, a := srv.Registrations(), srv.Authorizations(); r != 1 || a != 1 {
		t.Errorf("%d registrations, %d authorizations; want 1 each", r, a)
	}
	pre := &Config{ClientID: "pre", ClientSecret: "s"}
	if err := connect(t, srv, pre, Options{Mode: ModeHeadless}); err != nil {
		t.Errorf("pre-registered: %v", err)
	}
}

// A 2025-03-26 server's metadata, read by the bridge's own flow, is held
// to the rule the SDK holds the rest to: a server naming an http://
// token endpoint on another machine would get the code, the PKCE verifier
// and every refresh token in clear, and one naming a private address (a
// cloud's metadata service) would make the bridge post there. Each is
// refused before anything is sent, saying which endpoint and why; the
// flow used to take any http(s) URL and not look at the registration
// endpoint at all.
func TestLegacyMetadataEndpointsChecked(t *testing.T) {
	good := map[string]string{"issuer": "https://as.example", "authorization_endpoint": "https://as.example/authorize",
		"token_endpoint": "http://127.0.0.1:9/token", "registration_endpoint": "http://localhost:9/register"}
	for _, c := range []struct{ field, url, want string }{
		{"", "", ""},
		{"token_endpoint", "http://as.example/token", `the token_endpoint "http://as.example/token" is http:// to another machine: the authorization server must use https`},
		{"authorization_endpoint", "https://10.0.0.7/authorize", `the authorization_endpoint "https://10.0.0.7/authorize" is a private or reserved address`},
		{"registration_endpoint", "http://169.254.169.254/latest", `the registration_endpoint "http://169.254.169.254/latest" is http:// to another machine`},
		{"registration_endpoint", "https://[fd00::1]/register", "is a private or reserved address"},
		{"token_endpoint", "", `the token_endpoint "" is not an http(s) URL`},
		{"token_endpoint", "ftp://as.example/token", "is not an http(s) URL"},
	} {
		meta := maps.Clone(good)
		if c.field != "" {
			meta[c.field] = c.url
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { json.NewEncoder(w).Encode(meta) }))
		_, err := getMetadata(t.Context(), srv.Client(), srv.URL)
		srv.Close()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("sound endpoints: %v", err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s %q: %v, want an error saying %q", c.field, c.url, err, c.want)
		}
	}
}

// Requests that reach the loopback callback without the login's state (a
// web page firing at 127.0.0.1:PORT/callback, an error or a code of its
// own) decide nothing: the login takes the browser's real redirect.
func TestLoginCallbackIgnoresOtherRequests(t *testing.T) {
	srv := newServer(t, mcptest.OAuthOptions{})
	var cb *Callback
	real := browse(t)
	hostile := func(u string) error {
		for _, q := range []string{"?error=access_denied", "?code=planted&state=guessed", "?code=planted"} {
			resp, err := http.Get(cb.RedirectURL() + q)
			if err != nil {
				return fmt.Errorf("hostile page: %w", err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("the callback answered %q with %s, want 400", q, resp.Status)
			}
		}
		return real(u)
	}
	cb, err := ListenCallback(0, "srv", &strings.Builder{}, hostile)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	if err := connect(t, srv, &Config{CallbackPort: 0}, Options{Mode: ModeLogin, StateDir: t.TempDir(), Callback: cb}); err != nil {
		t.Fatalf("login: %v", err)
	}
}

// A login's redirect answers once: the same redirect again (the "Logged
// in" tab reloaded, or replayed by a page that saw it) is refused, and is
// not taken by the next login (a step-up) for its own result. That login
// used to return the old code at once, and fail on a bare state mismatch.
func TestLoginCallbackAnswersOnce(t *testing.T) {
	var redirect string
	get := func(u string) int {
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	var cb *Callback
	cb, err := ListenCallback(0, "srv", &strings.Builder{}, func(auth string) error {
		u, _ := url.Parse(auth)
		state := u.Query().Get("state")
		redirect = cb.RedirectURL() + "?code=code-" + state + "&state=" + state
		go func() { // the browser; its answer is not the test's
			if resp, err := http.Get(redirect); err == nil {
				resp.Body.Close()
			}
		}()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	for _, state := range []string{"one", "two"} {
		res, err := cb.Fetch(t.Context(), &auth.AuthorizationArgs{URL: "https://as.example/authorize?state=" + state})
		if err != nil || res.Code != "code-"+state {
			t.Fatalf("login %q: %+v %v, want its own code", state, res, err)
		}
		if status := get(redirect); status != http.StatusBadRequest {
			t.Errorf("login %q's redirect, repeated: %d, want 400", state, status)
		}
	}
}

// An earlier login's redirect whose result lands only once the next login
// has begun (its handler took the state, then the earlier login gave up
// before the result was handed over) is not the next login's answer: the
// next login takes its own redirect.
func TestLoginCallbackSkipsAnEarlierLoginsLateResult(t *testing.T) {
	var cb *Callback
	var earlier *pendingLogin
	redirect := func(authURL, code string) {
		u, _ := url.Parse(authURL)
		go func() { // the browser, in the login's own tab
			if resp, err := http.Get(cb.RedirectURL() + "?code=" + code + "&state=" + u.Query().Get("state")); err == nil {
				resp.Body.Close()
			}
		}()
	}
	giveUp, gaveUp := context.WithCancel(t.Context())
	cb, err := ListenCallback(0, "srv", &strings.Builder{}, func(authURL string) error {
		if earlier == nil {
			// The earlier login: its redirect's handler takes the state,
			// and the login gives up before the result is handed over.
			earlier = cb.login.Load()
			cb.login.CompareAndSwap(earlier, nil)
			gaveUp()
			return nil
		}
		// The earlier handler hands its result over as this login starts.
		earlier.result <- callbackResult{res: &auth.AuthorizationResult{Code: "code-earlier"}}
		redirect(authURL, "mine")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	if _, err := cb.Fetch(giveUp, &auth.AuthorizationArgs{URL: "https://as.example/authorize?state=earlier"}); err == nil {
		t.Fatal("the earlier login, given up, returned no error")
	}
	res, err := cb.Fetch(t.Context(), &auth.AuthorizationArgs{URL: "https://as.example/authorize?state=this-login"})
	if err != nil || res.Code != "mine" {
		t.Fatalf("Fetch: %+v %v, want this login's own code, not the earlier login's", res, err)
	}
}

// A redirect that reaches the callback with another state than the
// login's (an earlier or a second login tab, or a forged redirect) is
// told, in the browser, for what it is: nothing was authorized, and what
// to do. The login in progress still takes its own redirect.
func TestLoginCallbackForeignState(t *testing.T) {
	var cb *Callback
	var page string
	cb, err := ListenCallback(0, "srv", &strings.Builder{}, func(auth string) error {
		resp, err := http.Get(cb.RedirectURL() + "?code=planted&state=an-earlier-login")
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		page = fmt.Sprintf("%d %s", resp.StatusCode, body)
		u, _ := url.Parse(auth)
		go func() { // the browser, in the login's own tab
			if resp, err := http.Get(cb.RedirectURL() + "?code=mine&state=" + u.Query().Get("state")); err == nil {
				resp.Body.Close()
			}
		}()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	res, err := cb.Fetch(t.Context(), &auth.AuthorizationArgs{URL: "https://as.example/authorize?state=this-login"})
	if err != nil || res.Code != "mine" {
		t.Fatalf("Fetch: %+v %v, want the login's own code", res, err)
	}
	for _, want := range []string{"400 ", "a state that is not the login's in progress", "an earlier or a second login tab, or a forged redirect", "nothing was authorized", "run mcpbridge login again"} {
		if !strings.Contains(page, want) {
			t.Errorf("the callback answered the foreign redirect %q, want it to say %q", page, want)
		}
	}
}

// A login whose authorization URL carries no state is refused before the
// browser opens: its redirect could not be told from any request to the
// callback.
func TestLoginCallbackNeedsState(t *testing.T) {
	opened := false
	cb, err := ListenCallback(0, "srv", &strings.Builder{}, func(string) error { opened = true; return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second) // without the check, Fetch would wait for a browser
	defer cancel()
	_, err = cb.Fetch(ctx, &auth.AuthorizationArgs{URL: "https://as.example/authorize?client_id=c&code_challenge=x"})
	if err == nil || !strings.Contains(err.Error(), "carries no state") || opened {
		t.Errorf("Fetch = %v (browser opened: %v), want a refusal before the browser opens", err, opened)
	}
}

// The access token goes to the MCP server's origin only: a redirect to
// another origin of the same host (another port; https to http) is
// followed without it, a DPoP-bound one without a proof too. net/http
// keeps Authorization across a redirect to the same host name, whatever
// the port and scheme, so the token was sent there.
func TestTokenStaysWithItsOrigin(t *testing.T) {
	for _, dpop := range []bool{false, true} {
		t.Run(fmt.Sprintf("dpop=%v", dpop), func(t *testing.T) {
			srv := newServer(t, mcptest.OAuthOptions{DPoP: dpop})
			var mu sync.Mutex
			var seen []http.Header
			elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				seen = append(seen, r.Header.Clone())
				mu.Unlock()
				http.Redirect(w, r, srv.URL, http.StatusTemporaryRedirect)
			}))
			t.Cleanup(elsewhere.Close)
			var redirected atomic.Bool
			base := roundTripFunc(func(req *http.Request) (*http.Response, error) {
				if req.URL.Host != elsewhere.Listener.Addr().String() && req.Header.Get("Authorization") != "" && redirected.CompareAndSwap(false, true) {
					return &http.Response{StatusCode: http.StatusTemporaryRedirect, Header: http.Header{"Location": {elsewhere.URL + "/mcp"}},
						Body: http.NoBody, Request: req}, nil
				}
				return http.DefaultTransport.RoundTrip(req)
			})
			if err := connectVia(t, srv, nil, Options{Mode: ModeHeadless}, base); err != nil {
				t.Fatalf("connect: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) == 0 {
				t.Fatal("no request reached the other origin")
			}
			for i, h := range seen {
				if a, p := h.Get("Authorization"), h.Get("DPoP"); a != "" || p != "" {
					t.Errorf("request %d to the other origin carried Authorization %q, DPoP %q", i, a, p)
				}
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// The authorization URL is printed with its control and hiding
// characters escaped: its endpoint is the authorization server's
// metadata, where a C1 control or a bidi override (which url.Parse lets
// through) would reach the terminal, or show another URL than the one
// the browser opens. The browser gets it as it is.
func TestLoginURLPrintedSafely(t *testing.T) {
	const hostile = "https://as.example/authorize\u202eelpmaxe.rehto\u009b2J?state=s"
	out, opened := loginShown(t, hostile)
	if strings.ContainsAny(out, "\u202e\u009b") || !strings.Contains(out, `https://as.example/authorize\u202eelpmaxe.rehto\u009b2J?state=s`) {
		t.Errorf("printed %q, want the URL with its hidden and control characters escaped", out)
	}
	if opened != hostile {
		t.Errorf("the browser got %q, want the URL as it is", opened)
	}
}

// loginShown starts a login whose authorization URL is authURL, and
// returns what it printed and what it opened in the browser; the login
// gives up once the browser is opened.
func loginShown(t *testing.T, authURL string) (printed, opened string) {
	t.Helper()
	var out strings.Builder
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cb, err := ListenCallback(0, "srv", &out, func(u string) error { opened = u; cancel(); return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	if _, err := cb.Fetch(ctx, &auth.AuthorizationArgs{URL: authURL}); err == nil {
		t.Fatal("Fetch without a redirect: no error")
	}
	return out.String(), opened
}

// An authorization URL of a megabyte (an authorization_endpoint the
// server made so) is printed cut, not whole onto the terminal; the
// browser gets it as it is.
func TestLoginURLPrintedCut(t *testing.T) {
	long := "https://as.example/authorize/" + strings.Repeat("a", 1<<20) + "?state=s"
	out, opened := loginShown(t, long)
	if n := len(out); n > 2*textcut.PeerText || !strings.Contains(out, "https://as.example/authorize/aaa") {
		t.Errorf("printed %d bytes (%.100q…), want the URL's start, cut", n, out)
	}
	if note := fmt.Sprintf("The URL is %d bytes long and is shown cut", len(long)); !strings.Contains(out, note) {
		t.Errorf("printed without saying the URL was cut (%q)", note)
	}
	if opened != long {
		t.Errorf("the browser got %d bytes, want the URL as it is (%d)", len(opened), len(long))
	}
}

// A login opens an http(s) authorization URL only. The SDK lets a
// loopback host through with any scheme, so an authorization server (the
// MCP server names it) whose authorization_endpoint was
// "x-handler://localhost/..." had $BROWSER or xdg-open launch whatever
// handles that scheme, with the server's text.
func TestLoginOpensHTTPOnly(t *testing.T) {
	var base string
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	defer ts.Close()
	base = ts.URL
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"resource": base + "/mcp", "authorization_servers": []string{base}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"issuer": base, "authorization_endpoint": "x-handler://localhost/authorize",
			"token_endpoint": base + "/token", "registration_endpoint": base + "/register",
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"}})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"client_id": "c", "redirect_uris": []string{"http://127.0.0.1/callback"}, "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+base+`/.well-known/oauth-protected-resource/mcp"`)
		w.WriteHeader(http.StatusUnauthorized)
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var opened []string
	var out strings.Builder
	cb, err := ListenCallback(0, "srv", &out, func(u string) error { opened = append(opened, u); cancel(); return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	h, err := NewHandler(nil, Target{ServerName: "srv", URL: base + "/mcp"}, Options{Mode: ModeLogin, Callback: cb})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	err = h.Authorize(ctx, req, resp)
	if len(opened) != 0 || strings.Contains(out.String(), "x-handler:") {
		t.Errorf("opened %q, printed %q; want neither", opened, out.String())
	}
	if err == nil || !strings.Contains(err.Error(), `"x-handler://localhost/authorize`) || !strings.Contains(err.Error(), "not an http(s) URL") {
		t.Errorf("Authorize: %v, want a refusal naming the URL and why", err)
	}
}

// An authorization response that names another issuer (RFC 9207: the
// response of another authorization server, a mix-up) is refused, by the
// 2025-03-26 flow as by the SDK's; the 2025-03-26 flow took it.
func TestAuthorizationResponseOfAnotherIssuer(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) {
			srv := newServer(t, mcptest.OAuthOptions{Legacy: legacy})
			mixUp := roundTripFunc(func(req *http.Request) (*http.Response, error) {
				resp, err := http.DefaultTransport.RoundTrip(req)
				if err != nil || req.URL.Path != "/authorize" {
					return resp, err
				}
				loc, err := url.Parse(resp.Header.Get("Location"))
				if err != nil {
					return nil, err
				}
				q := loc.Query()
				q.Set("iss", "https://attacker.example")
				loc.RawQuery = q.Encode()
				resp.Header.Set("Location", loc.String())
				return resp, nil
			})
			err := connect(t, srv, nil, Options{Mode: ModeHeadless, HTTPClient: &http.Client{Transport: mixUp}})
			if err == nil || !strings.Contains(err.Error(), `"https://attacker.example"`) {
				t.Errorf("connect: %v, want a refusal naming the response's issuer", err)
			}
		})
	}
}
