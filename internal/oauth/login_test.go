package oauth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

// Only the authorization code keeps tokens; an entry without an oauth
// block uses it.
func TestStoresTokens(t *testing.T) {
	var none *Config
	if !none.StoresTokens() || !(&Config{}).StoresTokens() || (&Config{Grant: GrantClientCredentials}).StoresTokens() {
		t.Error("StoresTokens: want true for no block and the default grant, false for client_credentials")
	}
}

// A login's tokens are found for their server and client, not another's;
// a logout removes them once.
func TestStoredForget(t *testing.T) {
	dir := t.TempDir()
	const url = "https://mcp.example.com/mcp"
	store, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Save(Key(url, nil), &Record{Resource: url, Token: &oauth2.Token{AccessToken: "a"}}); err != nil {
		t.Fatal(err)
	}
	other := &Config{ClientID: "someone-else"}
	if !Stored(dir, url, nil) || Stored(dir, url, other) || Stored(dir, url+"/x", nil) {
		t.Error("Stored: want the tokens of this server and client only")
	}
	if had, err := Forget(t.Context(), dir, url, other); had || err != nil {
		t.Errorf("Forget of another client: %v %v", had, err)
	}
	if had, err := Forget(t.Context(), dir, url, nil); !had || err != nil {
		t.Errorf("Forget: %v %v", had, err)
	}
	if had, err := Forget(t.Context(), dir, url, nil); had || err != nil || Stored(dir, url, nil) {
		t.Errorf("Forget again: %v %v", had, err)
	}
}

// $BROWSER is run with the URL and the environment given, and waited
// for; without it and without a display, nothing is run.
func TestBrowsersOpen(t *testing.T) {
	out := filepath.Join(t.TempDir(), "opened")
	script := filepath.Join(t.TempDir(), "browser")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$MARK $1\" > \"$OUT\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"BROWSER": script}
	var b Browsers
	if err := b.Open(func(k string) string { return vars[k] }, []string{"MARK=given", "OUT=" + out}, "https://as.example/authorize?x=1"); err != nil {
		t.Fatal(err)
	}
	b.Wait()
	if data, err := os.ReadFile(out); err != nil || strings.TrimSpace(string(data)) != "given https://as.example/authorize?x=1" {
		t.Errorf("$BROWSER got %q, %v", data, err)
	}
	var none Browsers
	if err := none.Open(func(string) string { return "" }, nil, "https://as.example/"); err != nil {
		t.Errorf("no browser, no display: %v", err)
	}
	none.Wait()
}
