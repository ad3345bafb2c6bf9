package oauth

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/oauth2"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// A server that challenges with the DPoP scheme gets DPoP without any
// configuration: the login's token request carries a proof, the token
// comes back bound (token_type DPoP) and goes out with the DPoP scheme and
// a valid proof on every request; the key is stored with the token, so
// another process presents the stored token with the same key.
func TestDPoPAskedByTheServer(t *testing.T) {
	srv := newServer(t, mcptest.OAuthOptions{DPoP: true})
	dir := t.TempDir()
	if err := connect(t, srv, nil, Options{Mode: ModeHeadless, StateDir: dir}); err != nil {
		t.Fatalf("headless login: %v", err)
	}
	if err := connect(t, srv, nil, Options{StateDir: dir}); err != nil {
		t.Fatalf("with the stored token and key: %v", err)
	}
	if r := srv.DPoPRefusals(); len(r) != 0 {
		t.Errorf("refused: %q", r)
	}
	// initialize, initialized and tools/call, twice: each with its own proof.
	if n := srv.DPoPProofs(); n < 6 {
		t.Errorf("%d requests passed on a proof, want at least 6", n)
	}
	if a := srv.Authorizations(); a != 1 {
		t.Errorf("%d authorizations, want 1 (the second process uses the stored grant)", a)
	}
	rec := onlyRecord(t, dir)
	if rec.Token.TokenType != "DPoP" || rec.DPoPKey == nil {
		t.Errorf("stored token_type %q, key %v; want DPoP with its key", rec.Token.TokenType, rec.DPoPKey)
	}
	checkModes(t, dir)
}

// onlyRecord is the one record of a store.
func onlyRecord(t *testing.T, stateDir string) *Record {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(stateDir, "oauth", "*.json"))
	if len(files) != 1 {
		t.Fatalf("store holds %v, want one record", files)
	}
	s, _ := OpenStore(stateDir)
	rec, err := s.Load(strings.TrimSuffix(filepath.Base(files[0]), ".json"))
	if err != nil || rec == nil {
		t.Fatalf("loading the record: %v", err)
	}
	return rec
}

// Both servers demand a nonce: the token request and the first request to
// the MCP server are answered with use_dpop_nonce, and each is sent again
// with the nonce; later requests carry it from the start.
func TestDPoPNonces(t *testing.T) {
	srv := newServer(t, mcptest.OAuthOptions{DPoP: true, DPoPNonce: "server-nonce-1"})
	tap := &tap{}
	if err := connectVia(t, srv, nil, Options{Mode: ModeHeadless, HTTPClient: &http.Client{Transport: tap}}, tap); err != nil {
		t.Fatalf("connect: %v", err)
	}
	if r := srv.DPoPRefusals(); len(r) != 0 {
		t.Errorf("refused: %q", r)
	}
	// The token request: once without a nonce, once with.
	tokens := tap.find("/token")
	if len(tokens) != 2 || claim(t, tokens[0], "nonce") != nil || claim(t, tokens[1], "nonce") != "server-nonce-1" {
		t.Errorf("token requests: %d, nonces %v", len(tokens), nonces(t, tokens))
	}
	mcp := tap.find("/mcp")
	var withProof []*http.Request
	for _, r := range mcp {
		if r.Header.Get("DPoP") != "" {
			withProof = append(withProof, r)
		}
	}
	// The first bound request carries the token endpoint's nonce (one
	// origin) and is refused for the MCP server's, then every one carries
	// that.
	if len(withProof) < 3 || claim(t, withProof[0], "nonce") != "server-nonce-1" {
		t.Fatalf("MCP requests with proofs: %v", nonces(t, withProof))
	}
	for _, r := range withProof[1:] {
		if claim(t, r, "nonce") != "server-nonce-1-mcp" {
			t.Errorf("a later request's nonce: %v", claim(t, r, "nonce"))
		}
	}
}

// A server that wants a new nonce every time is answered once per
// request, not in a loop: two attempts, the second with the nonce the
// first was refused with.
func TestDPoPNonceRetriedOnce(t *testing.T) {
	var mu sync.Mutex
	var seen []string // the nonce of each proof
	n := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		nonce, _ := proofClaims(t, r.Header.Get("DPoP"))["nonce"].(string)
		seen = append(seen, nonce)
		fresh := fmt.Sprintf("nonce-%d", n)
		mu.Unlock()
		w.Header().Set("DPoP-Nonce", fresh)
		if r.URL.Path == "/token" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":"use_dpop_nonce"}`))
			return
		}
		w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer ts.Close()
	d := newDPoP(true)
	d.note(&oauth2.Token{AccessToken: "at", TokenType: "DPoP"})

	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0"}`))
	req.Header.Set("Authorization", "Bearer at")
	resp, err := (&dpopResource{d: d, base: http.DefaultTransport, origin: origin(req.URL)}).RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("resource request: %v %v", resp, err)
	}
	resp.Body.Close()
	req, _ = http.NewRequest(http.MethodPost, ts.URL+"/token", strings.NewReader("grant_type=client_credentials"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err = (&dpopTokens{d: d, base: http.DefaultTransport}).RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("token request: %v %v", resp, err)
	}
	body := new(bytes.Buffer)
	body.ReadFrom(resp.Body)
	resp.Body.Close()
	if !strings.Contains(body.String(), "use_dpop_nonce") {
		t.Errorf("the token endpoint's last answer reached the caller as %q", body)
	}
	mu.Lock()
	defer mu.Unlock()
	// Four requests, two each; the nonces the servers gave are in the
	// retries (and the token request starts with the nonce its origin gave
	// last, as the two share one here).
	if want := []string{"", "nonce-1", "nonce-2", "nonce-3"}; fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("nonces sent %q, want %q", seen, want)
	}
}

// What an attacker who reads the wire gets: a bound token and proofs.
// None of them gets the attacker in: the token without a proof, with the
// proof replayed, with a proof of the attacker's own key, or with the
// proof of the token request (another htu, no ath); and the refresh token
// is refused without the bridge's key.
func TestDPoPStolenToken(t *testing.T) {
	srv := newServer(t, mcptest.OAuthOptions{DPoP: true})
	tap := &tap{}
	if err := connectVia(t, srv, nil, Options{Mode: ModeHeadless, HTTPClient: &http.Client{Transport: tap}}, tap); err != nil {
		t.Fatalf("connect: %v", err)
	}
	var last *http.Request
	for _, r := range tap.find("/mcp") {
		if r.Method == http.MethodPost && r.Header.Get("DPoP") != "" {
			last = r
		}
	}
	tokenReq := tap.find("/token")
	if last == nil || len(tokenReq) != 1 {
		t.Fatalf("nothing to steal: %v, %d token requests", last, len(tokenReq))
	}
	access := strings.TrimPrefix(last.Header.Get("Authorization"), "DPoP ")
	attackerKey, _ := newDPoPKey()
	ownProof, _ := attackerKey.proof(http.MethodPost, last.URL, access, "")
	for _, tc := range []struct {
		name, auth, proof string
	}{
		{"as a Bearer token", "Bearer " + access, ""},
		{"with the proof replayed", "DPoP " + access, last.Header.Get("DPoP")},
		{"with a proof of another key", "DPoP " + access, ownProof},
		{"with the token request's proof", "DPoP " + access, tokenReq[0].Header.Get("DPoP")},
	} {
		if code := post(t, srv.URL, tc.auth, tc.proof); code != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", tc.name, code)
		}
	}
	refusals := strings.Join(srv.DPoPRefusals(), "\n")
	for _, want := range []string{"presented with Bearer", "replayed proof", "not the one the token is bound to", "htu"} {
		if !strings.Contains(refusals, want) {
			t.Errorf("no refusal for %q in:\n%s", want, refusals)
		}
	}
	var tok struct {
		Refresh string `json:"refresh_token"`
	}
	json.Unmarshal(tap.bodies["/token"], &tok)
	resp, err := http.PostForm(srv.Issuer+"/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.Refresh}, "resource": {srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("refreshing without the key: %s, want 400", resp.Status)
	}
	if tok.Refresh == "" {
		t.Error("the token response carried no refresh token to steal")
	}
}

// post sends a ping to the MCP server as an attacker would.
func post(t *testing.T, u, auth, proof string) int {
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if proof != "" {
		req.Header.Set("DPoP", proof)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A DPoP-bound refresh token is refreshed with a proof of the stored key:
// a later process, whose stored token has expired, refreshes before its
// first request and carries on.
func TestDPoPRefreshWithTheStoredKey(t *testing.T) {
	srv := newServer(t, mcptest.OAuthOptions{DPoP: true})
	dir := t.TempDir()
	if err := connect(t, srv, nil, Options{Mode: ModeHeadless, StateDir: dir}); err != nil {
		t.Fatalf("headless login: %v", err)
	}
	rec := onlyRecord(t, dir)
	rec.Token.Expiry = time.Now().Add(-time.Hour)
	store, _ := OpenStore(dir)
	if err := store.Save(Key(srv.URL, nil), rec); err != nil {
		t.Fatal(err)
	}
	if err := connect(t, srv, nil, Options{StateDir: dir}); err != nil {
		t.Fatalf("refreshing with the stored key: %v", err)
	}
	if srv.Refreshes() != 1 || srv.Authorizations() != 1 {
		t.Errorf("%d refreshes, %d authorizations; want 1 each", srv.Refreshes(), srv.Authorizations())
	}
	if r := srv.DPoPRefusals(); len(r) != 0 {
		t.Errorf("refused: %q", r)
	}
}

// oauth.dpop: true with an authorization server that ignores proofs: the
// token comes back as Bearer and is presented as Bearer, without a proof.
// With another grant (client credentials, ours) proofs are sent too.
func TestDPoPConfiguredBearerIssued(t *testing.T) {
	srv := newServer(t, mcptest.OAuthOptions{ClientID: "svc", ClientSecret: "s3cret"})
	tap := &tap{}
	for _, cfg := range []*Config{{DPoP: true}, {DPoP: true, Grant: GrantClientCredentials, ClientID: "svc", ClientSecret: "s3cret"}} {
		tap.reset()
		if err := connectVia(t, srv, cfg, Options{Mode: ModeHeadless, HTTPClient: &http.Client{Transport: tap}}, tap); err != nil {
			t.Fatalf("%+v: %v", cfg, err)
		}
		if tokens := tap.find("/token"); len(tokens) != 1 || tokens[0].Header.Get("DPoP") == "" {
			t.Errorf("%s: the token request carried no proof", cfg.grant())
		}
		for _, r := range tap.find("/mcp") {
			if a := r.Header.Get("Authorization"); r.Header.Get("DPoP") != "" || (a != "" && !strings.HasPrefix(a, "Bearer ")) {
				t.Errorf("%s: a Bearer token went out as %q with proof %q", cfg.grant(), a, r.Header.Get("DPoP"))
			}
		}
	}
}

// The key prints and logs as its thumbprint only; its private half is in
// the store's record (a 0600 file) and nowhere else.
func TestDPoPKeyNeverPrinted(t *testing.T) {
	k, err := newDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	scalar, _ := k.priv.Bytes()
	stored, _ := json.Marshal(&Record{Token: &oauth2.Token{AccessToken: "a"}, DPoPKey: k})
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("stored", "key", k, "record", &Record{DPoPKey: k})
	printed := fmt.Sprintf("%v %+v %s", k, k, logged.String())
	for _, enc := range []func([]byte) string{base64.StdEncoding.EncodeToString, base64.RawURLEncoding.EncodeToString, func(b []byte) string { return fmt.Sprintf("%x", b) }} {
		if strings.Contains(printed, enc(scalar)) {
			t.Fatalf("the private key is printed: %s", printed)
		}
	}
	if !strings.Contains(printed, k.Thumbprint()) {
		t.Errorf("printed %q, want the thumbprint", printed)
	}
	var back Record
	if err := json.Unmarshal(stored, &back); err != nil || back.DPoPKey == nil || !back.DPoPKey.priv.Equal(k.priv) {
		t.Errorf("the stored key does not read back: %v", err)
	}
	for _, bad := range []string{`"not base64!"`, `"` + base64.StdEncoding.EncodeToString([]byte("junk")) + `"`, `7`} {
		if err := json.Unmarshal([]byte(`{"token":{},"dpopKey":`+bad+`}`), &back); err == nil {
			t.Errorf("a damaged key %s was read", bad)
		}
	}
}

// Each proof is fresh and names its request: typ, the public key only,
// htm, htu without query or fragment, ath of the token, a new jti.
func TestDPoPProofClaims(t *testing.T) {
	k, _ := newDPoPKey()
	u, _ := url.Parse("https://user:pw@mcp.example.test/mcp?session=1#frag")
	p1, _ := k.proof(http.MethodPost, u, "the-token", "n1")
	p2, _ := k.proof(http.MethodPost, u, "the-token", "")
	h1, c1 := proofHeader(t, p1), proofClaims(t, p1)
	sum := sha256.Sum256([]byte("the-token"))
	jwk, _ := h1["jwk"].(map[string]any)
	switch {
	case h1["typ"] != "dpop+jwt" || h1["alg"] != "ES256":
		t.Errorf("header %v", h1)
	case jwk == nil || jwk["d"] != nil || jwk["kty"] != "EC":
		t.Errorf("jwk %v", jwk)
	case c1["htm"] != "POST" || c1["htu"] != "https://mcp.example.test/mcp" || c1["nonce"] != "n1":
		t.Errorf("claims %v", c1)
	case c1["ath"] != base64.RawURLEncoding.EncodeToString(sum[:]):
		t.Errorf("ath %v", c1["ath"])
	case c1["jti"] == proofClaims(t, p2)["jti"] || proofClaims(t, p2)["nonce"] != nil:
		t.Errorf("two proofs share a jti, or carry a nonce not given: %v %v", c1, proofClaims(t, p2))
	}
	if iat, _ := c1["iat"].(float64); time.Since(time.Unix(int64(iat), 0)).Abs() > time.Minute {
		t.Errorf("iat %v", c1["iat"])
	}
	// Verified with the key it carries.
	pub := &k.priv.PublicKey
	if _, err := jwt.Parse(p1, func(*jwt.Token) (any, error) { return pub, nil }, jwt.WithValidMethods([]string{"ES256"})); err != nil {
		t.Errorf("the proof does not verify: %v", err)
	}
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if _, err := jwt.Parse(p1, func(*jwt.Token) (any, error) { return &other.PublicKey, nil }); err == nil {
		t.Error("the proof verifies with another key")
	}
}

// A challenge turns DPoP on only when it offers the DPoP scheme with an
// algorithm the bridge signs with.
func TestDPoPChallengeTurnsItOn(t *testing.T) {
	for _, tc := range []struct {
		status    int
		challenge string
		want      bool
	}{
		{401, `DPoP resource_metadata="https://x/.well-known/oauth-protected-resource"`, true},
		{401, `Bearer realm="x", DPoP algs="ES256 RS256"`, true},
		{401, `DPoP algs="RS256 PS256"`, false},
		{401, `Bearer resource_metadata="https://x"`, false},
		{403, `DPoP error="insufficient_scope"`, false},
	} {
		d := newDPoP(false)
		d.noteChallenge(&http.Response{StatusCode: tc.status, Header: http.Header{"Www-Authenticate": {tc.challenge}}})
		if d.active() != tc.want {
			t.Errorf("%d %s: active %v, want %v", tc.status, tc.challenge, d.active(), tc.want)
		}
	}
}

func proofHeader(t *testing.T, proof string) map[string]any {
	t.Helper()
	tok, _, err := jwt.NewParser().ParseUnverified(proof, jwt.MapClaims{})
	if err != nil {
		t.Fatalf("proof %q: %v", proof, err)
	}
	return tok.Header
}

func proofClaims(t *testing.T, proof string) jwt.MapClaims {
	t.Helper()
	if proof == "" {
		return jwt.MapClaims{}
	}
	c := jwt.MapClaims{}
	if _, _, err := jwt.NewParser().ParseUnverified(proof, c); err != nil {
		t.Errorf("proof %q: %v", proof, err)
	}
	return c
}

func claim(t *testing.T, r *http.Request, name string) any {
	return proofClaims(t, r.Header.Get("DPoP"))[name]
}

func nonces(t *testing.T, rs []*http.Request) []any {
	var out []any
	for _, r := range rs {
		out = append(out, claim(t, r, "nonce"))
	}
	return out
}

// tap is the network beneath the bridge's transports: it records each
// request as sent (headers, not bodies) and the last token response's
// body.
type tap struct {
	mu     sync.Mutex
	reqs   []*http.Request
	bodies map[string][]byte
}

func (tp *tap) RoundTrip(req *http.Request) (*http.Response, error) {
	tp.mu.Lock()
	tp.reqs = append(tp.reqs, req.Clone(req.Context()))
	tp.mu.Unlock()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || req.URL.Path != "/token" || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	body := new(bytes.Buffer)
	body.ReadFrom(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body.Bytes()))
	tp.mu.Lock()
	if tp.bodies == nil {
		tp.bodies = map[string][]byte{}
	}
	tp.bodies[req.URL.Path] = body.Bytes()
	tp.mu.Unlock()
	return resp, nil
}

// find is the requests sent to path, in order.
func (tp *tap) find(path string) []*http.Request {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	var out []*http.Request
	for _, r := range tp.reqs {
		if r.URL.Path == path {
			out = append(out, r)
		}
	}
	return out
}

func (tp *tap) reset() {
	tp.mu.Lock()
	tp.reqs, tp.bodies = nil, nil
	tp.mu.Unlock()
}

// Protected resource metadata that requires DPoP-bound tokens turns DPoP
// on (with an algorithm the bridge signs with), and its body still
// reaches the discovery that asked for it.
func TestDPoPRequiredByResourceMetadata(t *testing.T) {
	for _, tc := range []struct {
		prm  string
		want bool
	}{
		{`{"resource":"https://x/mcp","dpop_bound_access_tokens_required":true}`, true},
		{`{"resource":"https://x/mcp","dpop_bound_access_tokens_required":true,"dpop_signing_alg_values_supported":["ES256","RS256"]}`, true},
		{`{"resource":"https://x/mcp","dpop_bound_access_tokens_required":true,"dpop_signing_alg_values_supported":["RS256"]}`, false},
		{`{"resource":"https://x/mcp","dpop_signing_alg_values_supported":["ES256"]}`, false},
		{`not json`, false},
	} {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(tc.prm)) }))
		d := newDPoP(false)
		resp, err := (&http.Client{Transport: &dpopTokens{d: d, base: http.DefaultTransport}}).Get(ts.URL + "/.well-known/oauth-protected-resource/mcp")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		ts.Close()
		if d.active() != tc.want || string(body) != tc.prm {
			t.Errorf("%s: active %v (want %v), body %q", tc.prm, d.active(), tc.want, body)
		}
	}
}

// A refresh that turns a bearer grant into a DPoP-bound one (the refresh
// carried a proof) stores the key with the token: the next process signs
// with it, not with a key of its own the token is not bound to.
func TestDPoPRefreshBindingStoresTheKey(t *testing.T) {
	tokenEndpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"access_token":"bound","token_type":"DPoP","refresh_token":"r2","expires_in":3600}`)
	}))
	defer tokenEndpoint.Close()
	store, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bearer := &Record{
		ClientID: "c", TokenURL: tokenEndpoint.URL, AuthStyle: oauth2.AuthStyleInParams,
		Token: &oauth2.Token{AccessToken: "old", TokenType: "Bearer", RefreshToken: "r1", Expiry: time.Now().Add(-time.Minute)},
	}
	if err := store.Save("k", bearer); err != nil {
		t.Fatal(err)
	}
	d := newDPoP(true)
	key, err := d.signer()
	if err != nil {
		t.Fatal(err)
	}
	src := &storedSource{store: store, key: "k", client: http.DefaultClient, log: slog.New(slog.DiscardHandler), dpop: d, rec: bearer}
	if tok, err := src.Token(); err != nil || tok.AccessToken != "bound" {
		t.Fatalf("Token: %v, %v", tok, err)
	}
	rec, err := store.Load("k")
	if err != nil || rec.DPoPKey == nil || rec.DPoPKey.Thumbprint() != key.Thumbprint() {
		t.Errorf("stored key %v (%v), want %v", rec.DPoPKey, err, key)
	}
}

// An MCP server that refuses the nonce it gave, asking for yet another
// at every retry, is reported as that: a login would not help, so it is
// not asked for (no needs-login, no new authorization, no refresh).
// It used to read as a server that wants a login.
func TestDPoPNonceRefusedIsNotALogin(t *testing.T) {
	srv := newServer(t, mcptest.OAuthOptions{DPoP: true})
	dir := t.TempDir()
	if err := connect(t, srv, nil, Options{Mode: ModeHeadless, StateDir: dir}); err != nil {
		t.Fatalf("headless login: %v", err)
	}
	var n atomic.Int32
	restless := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		if req.URL.Path != "/mcp" || req.Header.Get("DPoP") == "" {
			return http.DefaultTransport.RoundTrip(req)
		}
		h := http.Header{"Www-Authenticate": {`DPoP error="use_dpop_nonce", algs="ES256"`}, "Dpop-Nonce": {fmt.Sprintf("n%d", n.Add(1))}}
		return &http.Response{StatusCode: http.StatusUnauthorized, Header: h, Body: http.NoBody, Request: req}, nil
	})
	for _, mode := range []Mode{ModeNoLogin, ModeHeadless} {
		err := connectVia(t, srv, nil, Options{Mode: mode, StateDir: dir}, restless)
		var nl *NeedsLoginError
		if err == nil || errors.As(err, &nl) || !strings.Contains(err.Error(), "use_dpop_nonce") {
			t.Errorf("mode %d: connect: %v, want an error saying the server refused its own nonces", mode, err)
		}
	}
	if a, r := srv.Authorizations(), srv.Refreshes(); a != 1 || r != 0 {
		t.Errorf("%d authorizations, %d refreshes; want the login's one and none", a, r)
	}
}
