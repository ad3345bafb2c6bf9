package mcpclient

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/oauth"
)

func oauthConfig(url string) Config {
	return Config{ServerName: "guarded", Transport: TransportStreamableHTTP, URL: url}
}

func newOAuthServer(t *testing.T) *mcptest.OAuthServer {
	return mcptest.NewOAuthServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}), mcptest.OAuthOptions{})
}

// A server that wants a login shows as needs-login, with the command to
// run and no tools; --oauth-headless authorizes it, and the stored token
// serves the next start without a login.
func TestOAuthNeedsLoginThenHeadless(t *testing.T) {
	as := newOAuthServer(t)
	dir := t.TempDir()
	h, err := start(t, oauthConfig(as.URL), Options{OneShot: true, OAuth: OAuthOptions{StateDir: dir}})
	st := h.srv.Status()
	if err == nil || st.State != StateNeedsLogin || st.Err != "run mcpbridge login guarded" || len(h.names()) != 0 {
		t.Fatalf("without a login: %v; status %s %q, tools %v", err, st.State, st.Err, h.names())
	}
	h = mustStart(t, oauthConfig(as.URL), Options{OneShot: true, OAuth: OAuthOptions{StateDir: dir, Mode: oauth.ModeHeadless}})
	if !slices.Contains(h.names(), "mcp__guarded__echo") {
		t.Fatalf("headless: tools %v", h.names())
	}
	if res := h.call("mcp__guarded__echo", `{"message":"hi"}`); res.IsError {
		t.Errorf("call: %+v", res)
	}
	mustStart(t, oauthConfig(as.URL), Options{OneShot: true, OAuth: OAuthOptions{StateDir: dir}})
	if n := as.Authorizations(); n != 1 {
		t.Errorf("%d authorizations, want 1", n)
	}
}

// An entry that sends its own Authorization header and has no oauth block
// is not authorized by the bridge: a 401 is a failure that says the
// header's credential was refused, never quoting it.
func TestOAuthOwnHeader(t *testing.T) {
	as := newOAuthServer(t)
	cfg := oauthConfig(as.URL)
	cfg.Headers = map[string]string{"authorization": "Bearer wrong"}
	h, err := start(t, cfg, Options{OneShot: true, OAuth: OAuthOptions{Mode: oauth.ModeHeadless}})
	if st := h.srv.Status(); err == nil || st.State != StateFailed || !strings.Contains(st.Err, "refused the credential given in the Authorization header (401 Unauthorized") || strings.Contains(st.Err, "wrong") {
		t.Errorf("status %s %q (%v)", st.State, st.Err, err)
	}
	if n := as.Registrations(); n != 0 {
		t.Errorf("%d registrations, want none", n)
	}
}

// A long-running server that needs a login keeps trying, shown as
// needs-login, and comes up after a login elsewhere (another process)
// stored a token: no restart.
func TestOAuthRecoversAfterLogin(t *testing.T) {
	as := newOAuthServer(t)
	dir := t.TempDir()
	cfg := oauthConfig(as.URL)
	cfg.Reconnect = &ReconnectPolicy{Enabled: true, InitialDelay: 20 * time.Millisecond, MaxDelay: 100 * time.Millisecond, MaxAttempts: 10_000}
	h, _ := start(t, cfg, Options{OAuth: OAuthOptions{StateDir: dir}})
	waitFor(t, "needs-login while retrying", func() bool {
		st := h.srv.Status()
		return st.State == StateNeedsLogin && st.Attempt > 0
	})
	mustStart(t, oauthConfig(as.URL), Options{OneShot: true, OAuth: OAuthOptions{StateDir: dir, Mode: oauth.ModeHeadless}})
	waitFor(t, "ready after the login", func() bool { return h.srv.Status().State == StateReady })
	if !slices.Contains(h.names(), "mcp__guarded__echo") {
		t.Errorf("tools %v", h.names())
	}
}

// An oauth block that cannot make a handler (a key file gone) fails the
// attempt with its reason.
func TestOAuthHandlerError(t *testing.T) {
	cfg := oauthConfig("http://127.0.0.1:1/mcp")
	cfg.OAuth = &OAuthConfig{Grant: oauth.GrantClientCredentials, ClientID: "c", PrivateKeyFile: t.TempDir() + "/gone.pem"}
	h, err := start(t, cfg, Options{OneShot: true})
	if st := h.srv.Status(); err == nil || st.State != StateFailed || !strings.Contains(st.Err, "privateKeyFile") {
		t.Errorf("status %s %q (%v)", st.State, st.Err, err)
	}
}

// A server that takes only DPoP-bound tokens: the server's HTTP stack
// presents them with a proof per request, so its tools list and a call
// work, and the token and its key are stored together for the next start.
func TestOAuthDPoP(t *testing.T) {
	as := mcptest.NewOAuthServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}), mcptest.OAuthOptions{DPoP: true, DPoPNonce: "n"})
	dir := t.TempDir()
	h := mustStart(t, oauthConfig(as.URL), Options{OneShot: true, OAuth: OAuthOptions{StateDir: dir, Mode: oauth.ModeHeadless}})
	if res := h.call("mcp__guarded__echo", `{"message":"hi"}`); res.IsError {
		t.Errorf("call: %+v", res)
	}
	mustStart(t, oauthConfig(as.URL), Options{OneShot: true, OAuth: OAuthOptions{StateDir: dir}})
	if n, r := as.DPoPProofs(), as.DPoPRefusals(); n < 4 || len(r) != 0 {
		t.Errorf("%d requests on proofs, refusals %q", n, r)
	}
	if n := as.Authorizations(); n != 1 {
		t.Errorf("%d authorizations, want 1", n)
	}
}
