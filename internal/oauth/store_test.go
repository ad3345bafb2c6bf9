package oauth

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

func TestStateDir(t *testing.T) {
	env := func(kv map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
	}
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_STATE_HOME": "/x/state", "HOME": "/home/u"}, "/x/state/mcpbridge"},
		{map[string]string{"XDG_STATE_HOME": "relative", "HOME": "/home/u"}, "/home/u/.local/state/mcpbridge"},
		{map[string]string{"HOME": "/home/u"}, "/home/u/.local/state/mcpbridge"},
	} {
		if got, err := StateDir(env(tc.env)); err != nil || got != tc.want {
			t.Errorf("StateDir(%v) = %q, %v; want %q", tc.env, got, err, tc.want)
		}
	}
	if _, err := StateDir(env(nil)); err == nil {
		t.Error("StateDir without HOME succeeded")
	}
}

func TestStore(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := OpenStore(state) // tightens the existing 0755 directory
	if err != nil {
		t.Fatal(err)
	}
	key := Key("https://mcp.example/mcp", &Config{ClientID: "c"})
	if key == Key("https://mcp.example/mcp", nil) || key == Key("https://other.example/mcp", &Config{ClientID: "c"}) {
		t.Error("keys of different resources or clients collide")
	}
	if r, err := s.Load(key); r != nil || err != nil {
		t.Fatalf("Load of nothing: %v, %v", r, err)
	}
	rec := &Record{Resource: "https://mcp.example/mcp", ClientID: "c", Token: &oauth2.Token{AccessToken: "a", RefreshToken: "r"}}
	if err := s.Save(key, rec); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(key)
	if err != nil || got.Token.AccessToken != "a" || got.Token.RefreshToken != "r" || got.ClientID != "c" {
		t.Fatalf("Load: %+v, %v", got, err)
	}
	checkModes(t, state)
	if err := os.WriteFile(s.path(key), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(key); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("Load of a damaged record: %v", err)
	}
	for _, want := range []bool{true, false} {
		if had, err := s.Delete(key); had != want || err != nil {
			t.Errorf("Delete: %v, %v; want %v", had, err, want)
		}
	}
}

// Two processes whose stored token expired refresh it at once: one refresh
// request reaches the authorization server (it rotates refresh tokens, so
// a second would be refused), and both end with the same valid token.
func TestRefreshAcrossProcesses(t *testing.T) {
	srv := newServer(t, mcptest.OAuthOptions{RefreshHold: 200 * time.Millisecond})
	dir := t.TempDir()
	s, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	key := Key(srv.URL, nil)
	err = s.Save(key, &Record{
		Resource: srv.URL, ClientID: "client-0", TokenURL: srv.Issuer + "/token", AuthStyle: oauth2.AuthStyleInParams,
		Token: &oauth2.Token{AccessToken: "expired", RefreshToken: srv.RefreshToken(), Expiry: time.Now().Add(-time.Hour)},
	})
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	type child struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   *bufio.Reader
	}
	var children []child
	for range 2 {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), refreshChildEnv+"="+dir+" "+key)
		cmd.Stderr = os.Stderr
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		c := child{cmd, stdin, bufio.NewReader(stdout)}
		children = append(children, c)
		if line, err := c.out.ReadString('\n'); line != "ready\n" {
			t.Fatalf("child: %q, %v", line, err)
		}
	}
	for _, c := range children { // both start refreshing together
		c.stdin.Close()
	}
	var tokens []string
	for _, c := range children {
		line, _ := c.out.ReadString('\n')
		if err := c.cmd.Wait(); err != nil {
			t.Fatalf("child: %v", err)
		}
		tokens = append(tokens, strings.TrimSpace(line))
	}
	if n := srv.Refreshes(); n != 1 {
		t.Errorf("%d refresh requests reached the server, want 1", n)
	}
	if tokens[0] != tokens[1] || !srv.Valid(tokens[0]) {
		t.Errorf("tokens %q: want one valid token for both", tokens)
	}
}

// refreshChild is one process of TestRefreshAcrossProcesses: it reads the
// stored grant, says ready, waits for stdin to close, and prints the
// access token its source returns.
func refreshChild(arg string) int {
	dir, key, _ := strings.Cut(arg, " ")
	s, err := OpenStore(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	rec, err := s.Load(key)
	if err != nil || rec == nil {
		fmt.Fprintln(os.Stderr, "no record:", err)
		return 1
	}
	src := &storedSource{store: s, key: key, client: http.DefaultClient, log: slog.New(slog.DiscardHandler), rec: rec}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	tok, err := src.Token()
	if err != nil {
		fmt.Fprintln(os.Stderr, "Token:", err)
		return 1
	}
	fmt.Println(tok.AccessToken)
	return 0
}

// A logout while a process holds the grant (serve running) ends it there
// too, once its access token expires: the process does not spend the
// refresh token, so the grant does not come back in the file the logout
// removed. The logout leaves the key's lock file, which another process
// may hold: it used to remove it, and a third process could then lock a
// new file beside the held one. A process used to refresh from its copy
// and write the record back.
func TestLogoutEndsARunningGrant(t *testing.T) {
	srv := newServer(t, mcptest.OAuthOptions{})
	s, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	key := Key(srv.URL, nil)
	rec := &Record{
		Resource: srv.URL, ClientID: "client-0", TokenURL: srv.Issuer + "/token", AuthStyle: oauth2.AuthStyleInParams,
		Token: &oauth2.Token{AccessToken: "expired", RefreshToken: srv.RefreshToken(), Expiry: time.Now().Add(-time.Hour)},
	}
	if err := s.Save(key, rec); err != nil {
		t.Fatal(err)
	}
	src := &storedSource{store: s, key: key, client: http.DefaultClient, log: slog.New(slog.DiscardHandler), rec: rec}
	unlock, err := s.Lock(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if had, err := s.Delete(key); !had || err != nil {
		t.Fatalf("logout: %v %v", had, err)
	}
	if _, err := os.Stat(filepath.Join(s.dir, key+".lock")); err != nil {
		t.Errorf("the logout removed the key's lock file: %v", err)
	}
	var re *oauth2.RetrieveError
	if _, err := src.Token(); !errors.As(err, &re) || re.ErrorCode != "invalid_grant" || !strings.Contains(re.ErrorDescription, "mcpbridge logout") {
		t.Errorf("Token after a logout: %v, want invalid_grant saying the grant was removed", err)
	}
	if rec, err := s.Load(key); rec != nil || err != nil {
		t.Errorf("the record came back after the logout: %+v %v", rec, err)
	}
	if n := srv.Refreshes(); n != 0 {
		t.Errorf("%d refresh requests after the logout, want none", n)
	}
}

// A refresh that fails keeps a token that has not actually expired, and
// leaves the stored record alone; an expired one without a refresh token
// is invalid_grant, which makes the SDK ask for a new authorization.
func TestStoredSourceFailures(t *testing.T) {
	srv := newServer(t, mcptest.OAuthOptions{})
	s, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	soon := &Record{
		ClientID: "c", TokenURL: srv.Issuer + "/token", AuthStyle: oauth2.AuthStyleInParams,
		Token: &oauth2.Token{AccessToken: "still-good", RefreshToken: "spent", Expiry: dueExpiry()},
	}
	if err := s.Save("k", soon); err != nil {
		t.Fatal(err)
	}
	src := &storedSource{store: s, key: "k", client: http.DefaultClient, log: slog.New(slog.DiscardHandler), rec: soon}
	if tok, err := src.Token(); err != nil || tok.AccessToken != "still-good" {
		t.Errorf("Token after a refused refresh: %v, %v; want the current token", tok, err)
	}
	if rec, _ := s.Load("k"); rec.Token.RefreshToken != "spent" {
		t.Errorf("stored record changed: %+v", rec.Token)
	}
	gone := *soon
	gone.Token = &oauth2.Token{AccessToken: "old", RefreshToken: "spent", Expiry: time.Now().Add(-time.Minute)}
	if err := s.Save("k", &gone); err != nil {
		t.Fatal(err)
	}
	src.rec = &gone
	if _, err := src.Token(); err == nil || !strings.Contains(err.Error(), "refreshing the OAuth token") {
		t.Errorf("Token after a refused refresh of an expired token: %v", err)
	}
	none := gone
	none.Token = &oauth2.Token{AccessToken: "old", Expiry: time.Now().Add(-time.Minute)}
	if err := s.Save("k", &none); err != nil {
		t.Fatal(err)
	}
	var re *oauth2.RetrieveError
	if _, err := src.Token(); !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Errorf("Token without a refresh token: %v, want invalid_grant", err)
	}
}

// A logout waits for a refresh another process has under way (it holds
// the key's lock, the record read): the refresh stores its token, and the
// logout then removes it. A logout used to remove the record under the
// refresh, which wrote the grant back after "Logged out", its new refresh
// token with it; one that cannot wait says so and removes nothing.
func TestLogoutWaitsForARefresh(t *testing.T) {
	dir := t.TempDir()
	const resource = "https://mcp.example.com/mcp"
	s, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	key := Key(resource, nil)
	rec := &Record{Resource: resource, Token: &oauth2.Token{AccessToken: "old", RefreshToken: "r1"}}
	if err := s.Save(key, rec); err != nil {
		t.Fatal(err)
	}
	unlock, err := s.Lock(t.Context(), key) // the refresh
	if err != nil {
		t.Fatal(err)
	}
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	if had, err := Forget(gone, dir, resource, nil); had || err == nil || !strings.Contains(err.Error(), "waiting for another mcpbridge's refresh") {
		t.Errorf("Forget that cannot wait for the refresh: %v %v, want an error saying why", had, err)
	}
	if !Stored(dir, resource, nil) {
		t.Fatal("a Forget that could not wait removed the record")
	}
	done := make(chan error, 1)
	go func() {
		_, err := Forget(t.Context(), dir, resource, nil)
		done <- err
	}()
	rec.Token = &oauth2.Token{AccessToken: "new", RefreshToken: "r2"}
	if err := s.Save(key, rec); err != nil { // the refresh's result
		t.Fatal(err)
	}
	unlock()
	if err := <-done; err != nil {
		t.Fatalf("Forget: %v", err)
	}
	if Stored(dir, resource, nil) {
		t.Error("the refreshed grant outlived the logout")
	}
}

// dueExpiry is an expiry the oauth2 package counts as due for a refresh
// (it refreshes 10 s early) that has not passed yet, leaving a slow
// machine nearly all those 10 s before the token truly expires (5 s were
// passed by a loaded machine before the refusal was weighed).
func dueExpiry() time.Time { return time.Now().Add(9500 * time.Millisecond) }
