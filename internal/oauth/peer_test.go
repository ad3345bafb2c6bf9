package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode"

	"golang.org/x/oauth2"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/internal/textcut"
)

// hostileText is an authorization server's text made to harm where it is
// shown: the terminal's title set and its screen cleared, a line forged,
// a name written backwards, and close to a megabyte (the oauth2 package
// and the SDK read an answer up to 1 MiB).
var hostileText = "\x1b]0;owned\x07\x1b[2J\r\nmcpbridge: logged in as admin \u202egnp.exe " + strings.Repeat("A", 900<<10)

// checkQuoted fails t unless text, which quotes hostileText where it reaches
// an error or a log, is cut and holds no character a terminal obeys,
// while it still shows what the server said.
func checkQuoted(t *testing.T, where, text string) {
	t.Helper()
	if len(text) > 2*textcut.PeerText {
		t.Errorf("%s: %d bytes, want the server's text cut to about %d", where, len(text), textcut.PeerText)
	}
	if i := strings.IndexFunc(text, func(r rune) bool { return unicode.IsControl(r) || termsafe.Hidden(r) }); i >= 0 {
		t.Errorf("%s: the server's %q reaches the terminal as it is: %.80q", where, []rune(text[i:])[0], text[max(i-20, 0):])
	}
	if !strings.Contains(text, `\x1b]0;owned`) {
		t.Errorf("%s: %.200q, want the server's text shown, escaped", where, text)
	}
}

// A refresh the authorization server refuses, with hostileText text in a JSON
// error or as a plain body, is logged (the current token still good) and
// returned (it expired) with that text escaped and cut: it was quoted
// whole, up to a megabyte, a plain body's escapes and line breaks raw.
func TestRefreshRefusalQuotedSafely(t *testing.T) {
	for name, answer := range map[string]http.HandlerFunc{
		"json": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]string{"error": "invalid_request", "error_description": hostileText})
		},
		"plain": func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, hostileText)
		},
	} {
		t.Run(name, func(t *testing.T) {
			as := httptest.NewServer(answer)
			defer as.Close()
			s, err := OpenStore(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			log := mcptest.NewLog()
			rec := &Record{ClientID: "c", TokenURL: as.URL + "/token", AuthStyle: oauth2.AuthStyleInParams,
				Token: &oauth2.Token{AccessToken: "still-good", RefreshToken: "r", Expiry: dueExpiry()}}
			if err := s.Save("k", rec); err != nil {
				t.Fatal(err)
			}
			src := &storedSource{store: s, key: "k", client: as.Client(), log: log.Logger(), rec: rec}
			if tok, err := src.Token(); err != nil || tok.AccessToken != "still-good" {
				t.Fatalf("Token: %v, %v; want the current token", tok, err)
			}
			warned := false
			for _, r := range log.Records() {
				for _, a := range r.Attrs {
					if r.Level == slog.LevelWarn && a.Key == "error" {
						warned = true
						checkQuoted(t, "the warning", a.Value.String())
					}
				}
			}
			if !warned {
				t.Fatalf("no warning of the refused refresh: %s", log.Text())
			}
			expired := *rec
			expired.Token = &oauth2.Token{AccessToken: "old", RefreshToken: "r", Expiry: time.Now().Add(-time.Minute)}
			if err := s.Save("k", &expired); err != nil {
				t.Fatal(err)
			}
			src.rec = &expired
			_, err = src.Token()
			if err == nil {
				t.Fatal("a refused refresh of an expired token succeeded")
			}
			checkQuoted(t, "the error", err.Error())
		})
	}
}

// A headless authorization that a hostileText authorization server refuses,
// in the redirect's error and error_description or in its status line,
// fails with that text escaped and cut: it was quoted whole, its line
// breaks and escapes raw.
func TestHeadlessRefusalQuotedSafely(t *testing.T) {
	for name, authorize := range map[string]http.HandlerFunc{
		"redirect": func(w http.ResponseWriter, r *http.Request) {
			q := url.Values{"error": {hostileText[:40]}, "error_description": {hostileText}, "state": {r.URL.Query().Get("state")}}
			http.Redirect(w, r, r.URL.Query().Get("redirect_uri")+"?"+q.Encode(), http.StatusFound)
		},
		"status line": func(w http.ResponseWriter, _ *http.Request) {
			conn, buf, err := w.(http.Hijacker).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			reason := strings.NewReplacer("\r", "", "\n", "").Replace(hostileText) // a status line ends at a line break
			fmt.Fprintf(buf, "HTTP/1.1 200 %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", reason)
			buf.Flush()
		},
	} {
		t.Run(name, func(t *testing.T) {
			err := connect(t, newServer(t, mcptest.OAuthOptions{}), nil, Options{Mode: ModeHeadless, HTTPClient: detour(t, "/authorize", authorize)})
			if err == nil {
				t.Fatal("connected past a refusal")
			}
			checkQuoted(t, "the connection's error", err.Error())
		})
	}
}

// Whatever an authorization server's answer puts in an error that leaves
// the handler (a refused registration, a refused token request, quoted by
// the SDK or the oauth2 package) is escaped and cut: it reached the
// connection's error whole.
func TestHandlerErrorsQuotedSafely(t *testing.T) {
	refuse := func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, hostileText)
	}
	for _, path := range []string{"/register", "/token"} {
		t.Run(path, func(t *testing.T) {
			err := connect(t, newServer(t, mcptest.OAuthOptions{}), nil, Options{Mode: ModeHeadless, HTTPClient: detour(t, path, refuse)})
			if err == nil {
				t.Fatal("connected past a refusal")
			}
			checkQuoted(t, "the connection's error", err.Error())
			var re *oauth2.RetrieveError
			if path == "/token" && !errors.As(err, &re) {
				t.Errorf("%v: the oauth2 package's error is no longer found in it", err)
			}
		})
	}
}

// detour is a client of authorization servers that sends the requests
// for path to a server of h instead.
func detour(t *testing.T, path string, h http.HandlerFunc) *http.Client {
	hostileAS := httptest.NewServer(h)
	t.Cleanup(hostileAS.Close)
	to, _ := url.Parse(hostileAS.URL)
	return &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.URL.Path == path {
			req = req.Clone(req.Context())
			req.URL.Host, req.Host = to.Host, ""
		}
		return http.DefaultTransport.RoundTrip(req)
	})}
}

// A server's text ends without the line break its body ends with, which
// escaped would show as a literal \n.
func TestPeerTextTrimsItsLineBreak(t *testing.T) {
	if got := peerText("header is required\r\n"); got != "header is required" {
		t.Errorf("peerText: %q", got)
	}
}
