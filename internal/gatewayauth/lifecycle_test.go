package gatewayauth

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/time/rate"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/internal/audit"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// clock is a test clock that moves only when told.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// The Protected Resource Metadata is served to anyone at both RFC 9728
// paths, and names the issuer.
func TestProtectedResourceMetadata(t *testing.T) {
	s := newServed(t, Options{})
	s.apply(t, scopedConfig, nil)
	want := oauthex.ProtectedResourceMetadata{Resource: s.resource(), AuthorizationServers: []string{s.is.URL()}, ScopesSupported: []string{"mcp:tools"}, BearerMethodsSupported: []string{"header"}, ResourceName: "mcpbridge"}
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		resp, err := http.Get(s.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var got oauthex.ProtectedResourceMetadata
		err = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if resp.StatusCode != 200 || err != nil {
			t.Fatalf("GET %s: %d, %v", path, resp.StatusCode, err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("GET %s (-want +got):\n%s", path, d)
		}
	}
	resp, err := http.Get(s.srv.URL + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("another well-known path: %d, want 404", resp.StatusCode)
	}
}

// A bearer token can be replayed by whoever holds it until it expires:
// without jti tracking, that is what a bearer token is. What the gateway
// guarantees is that a replay after exp (and the leeway) is refused, even
// though the token was verified, and cached, before.
func TestReplayAfterExpiryIsRefused(t *testing.T) {
	clk := &clock{t: time.Now()}
	s := newServed(t, Options{Now: clk.Now})
	s.apply(t, scopedConfig, nil)
	tok := "Bearer " + s.is.Sign(t, s.is.Claims("alice", s.resource(), jwt.MapClaims{"scope": "mcp:tools", "exp": clk.Now().Add(time.Minute).Unix()}))
	for i := range 2 {
		if status, _ := s.post(t, tok); status != 200 {
			t.Fatalf("use %d: %d, want 200", i+1, status)
		}
	}
	clk.Add(time.Minute + Leeway + time.Second)
	if status, header := s.post(t, tok); status != 401 || !strings.Contains(header, `error="invalid_token"`) {
		t.Fatalf("replayed after expiry: %d %q, want 401 invalid_token", status, header)
	}
}

// A new kid makes the gateway fetch the JWKS again, but a flood of unknown
// kids does not make it fetch more than its limit allows; with the issuer
// down, cached keys keep working and the log says the refresh failed.
func TestJWKSRefreshAndOutage(t *testing.T) {
	s := newServed(t, Options{RefreshUnknownKID: rate.Every(time.Hour)})
	s.apply(t, scopedConfig, nil)
	if n := s.is.Fetches.Load(); n != 1 {
		t.Fatalf("JWKS fetched %d times at start, want 1", n)
	}
	// A real issuer is milliseconds away: the refresh used to be bounded
	// by the limiter's 1 ms wait, and the rotated key was refused until
	// the hourly refresh (TestJWKSRefreshAndOutage failed under load).
	s.is.Latency.Store(int64(20 * time.Millisecond))
	rotated := s.is.Rotate(t)
	claims := s.is.Claims("alice", s.resource(), jwt.MapClaims{"scope": "mcp:tools"})
	if status, _ := s.post(t, "Bearer "+mcptest.SignJWT(t, jwt.SigningMethodRS256, rotated, "rsa2", claims)); status != 200 {
		t.Fatalf("a token of the rotated key: %d, want 200", status)
	}
	for range 20 {
		if status, _ := s.post(t, "Bearer "+mcptest.SignJWT(t, jwt.SigningMethodRS256, rotated, "rsa9", claims)); status != 401 {
			t.Fatalf("an unknown kid: %d, want 401", status)
		}
	}
	if n := s.is.Fetches.Load(); n != 2 {
		t.Fatalf("JWKS fetched %d times, want 2: once at start, once for rsa2, none for the flood", n)
	}

	s2 := newServed(t, Options{RefreshUnknownKID: rate.Inf})
	s2.apply(t, scopedConfig, nil)
	s2.is.Down.Store(true)
	claims = s2.is.Claims("alice", s2.resource(), jwt.MapClaims{"scope": "mcp:tools"})
	if status, _ := s2.post(t, "Bearer "+mcptest.SignJWT(t, jwt.SigningMethodRS256, s2.is.Rotate(t), "rsa2", claims)); status != 401 {
		t.Fatalf("a new kid while the issuer is down: %d, want 401", status)
	}
	if status, _ := s2.post(t, "Bearer "+s2.is.SignEC(t, claims)); status != 200 {
		t.Fatalf("a cached key while the issuer is down: %d, want 200", status)
	}
	if !strings.Contains(s2.logs.String(), "refreshing the JWKS failed; the cached keys stay in use") {
		t.Errorf("the log does not say the refresh failed:\n%s", s2.logs.String())
	}
}

// Calls past an identity's rate are refused at once with when to retry,
// counted, and admitted again once the bucket refills.
func TestRateLimitPerIdentity(t *testing.T) {
	clk := &clock{t: time.Now()}
	var refused atomic.Int32
	s := newServed(t, Options{Now: clk.Now, Refused: func(r string) {
		if r == "rate_limited" {
			refused.Add(1)
		}
	}})
	s.apply(t, policyConfig+"rateLimit: {perIdentity: 2/m, burst: 2}\n", map[string]string{"CI_TOKEN": "ci-secret-token"})
	alice := s.connect(t, s.is.Sign(t, s.is.Claims("alice", s.resource(), nil)), nil)
	ci := s.connect(t, "ci-secret-token", nil)
	for range 2 {
		if code, err := callCode(t, alice, "mcp__time__now"); code != 0 {
			t.Fatal(err)
		}
	}
	code, err := callCode(t, alice, "mcp__time__now")
	if code != CodeRateLimited || !strings.Contains(err.Error(), "retry in 30s") {
		t.Fatalf("third call: %d %v, want %d saying retry in 30s", code, err, CodeRateLimited)
	}
	if code, err := callCode(t, ci, "mcp__time__now"); code != 0 {
		t.Fatalf("another identity is limited by alice's calls: %v", err)
	}
	clk.Add(30 * time.Second)
	if code, err := callCode(t, alice, "mcp__time__now"); code != 0 {
		t.Fatalf("after 30s: %v", err)
	}
	if n := refused.Load(); n != 1 {
		t.Errorf("rate-limited calls counted: %d, want 1", n)
	}
	if n := s.ran["mcp__time__now"].Load(); n != 4 {
		t.Errorf("the tool ran %d times, want 4", n)
	}
}

// An audit trail that cannot be written stops the calls (fail closed),
// with a log line saying so; failOpen keeps serving. The call whose own
// line fails is not answered either: its result would go out with no
// line (it used to).
func TestAuditUnwritableFailsClosed(t *testing.T) {
	for _, failOpen := range []bool{false, true} {
		s := newServed(t, Options{})
		s.apply(t, "auth: {tokens: {ci: CI_TOKEN}}\naudit: {file: /dev/full, failOpen: "+map[bool]string{false: "false", true: "true"}[failOpen]+"}\n", map[string]string{"CI_TOKEN": "tok"})
		ci := s.connect(t, "tok", nil)
		code, _ := callCode(t, ci, "mcp__time__now") // its line fails: the trail is broken
		if want := map[bool]int64{false: CodeUnaudited, true: 0}[failOpen]; code != want {
			t.Errorf("failOpen %v: the call whose line failed: code %d, want %d", failOpen, code, want)
		}
		code, _ = callCode(t, ci, "mcp__time__now")
		if want := map[bool]int64{false: CodeUnaudited, true: 0}[failOpen]; code != want {
			t.Errorf("failOpen %v: the call after a failed write: code %d, want %d", failOpen, code, want)
		}
		if !strings.Contains(s.logs.String(), "the trail cannot be written") {
			t.Errorf("failOpen %v: the log does not say the trail failed:\n%s", failOpen, s.logs.String())
		}
	}
}

// A new policy applies to the sessions already open: they are told their
// tools list changed, and their next list and calls follow it.
func TestPolicyReloadAppliesToOpenSessions(t *testing.T) {
	s := newServed(t, Options{})
	s.apply(t, policyConfig, map[string]string{"CI_TOKEN": "x"})
	changed := make(chan struct{}, 1)
	bob := s.connect(t, s.is.SignEC(t, s.is.Claims("bob", s.resource(), jwt.MapClaims{"groups": []string{"readers"}})), changed)
	if d := cmp.Diff([]string{"mcp__github__get_issue"}, toolNames(t, bob)); d != "" {
		t.Fatalf("before (-want +got):\n%s", d)
	}
	s.apply(t, strings.Replace(policyConfig, `allow: ["mcp__github__get_*", "mcp__github__list_*"]`, `allow: ["mcp__time__*"]`, 1), map[string]string{"CI_TOKEN": "x"})
	mcptest.Eventually(t, 10*time.Second, func() bool {
		select {
		case <-changed:
			return true
		default:
			return false
		}
	}, "bob's session to get tools list_changed")
	if d := cmp.Diff([]string{"mcp__time__now"}, toolNames(t, bob)); d != "" {
		t.Errorf("after (-want +got):\n%s", d)
	}
	checkHidden(t, bob, "mcp__github__get_issue") // the new policy denies it
}

// Removing the gateway entry from a gateway that required tokens does not
// open it: without the entry, requests without the --token-env token are
// refused.
func TestRemovedEntryKeepsAuthRequired(t *testing.T) {
	s := newServed(t, Options{BearerToken: "cli-token"})
	s.apply(t, scopedConfig, nil)
	if status, _ := s.post(t, "Bearer cli-token"); status != 200 {
		t.Errorf("the --token-env token beside the entry's auth: %d, want 200", status)
	}
	s.keeper.Clear(s.keeper.Current())
	if status, _ := s.post(t, ""); status != 401 {
		t.Errorf("no token, entry removed: %d, want 401", status)
	}
	if status, _ := s.post(t, "Bearer cli-token"); status != 200 {
		t.Errorf("the --token-env token, entry removed: %d, want 200", status)
	}
	// Without --token-env, serve wired Authenticate for the entry's auth:
	// no token can pass until an entry is in force again, and the
	// refusal says so (503, not a 401 that tells a client to drop its
	// token).
	s2 := newServed(t, Options{})
	s2.apply(t, scopedConfig, nil)
	s2.keeper.Clear(s2.keeper.Current())
	if status, challenge := s2.post(t, ""); status != 503 || challenge != "" {
		t.Errorf("no token, entry removed, no --token-env: %d, WWW-Authenticate %q; want 503 without a challenge", status, challenge)
	}
}

// Without auth configured, every HTTP caller is "anonymous", whatever
// Authorization header it sends, and the policy decides for that name.
func TestNoAuthIsAnonymous(t *testing.T) {
	s := newServed(t, Options{})
	s.apply(t, "policy: [{subjects: [anonymous], allow: [\"mcp__time__*\"]}]\n", nil)
	header := http.Header{"Authorization": {"Bearer some-leftover-token"}}
	for name, want := range map[string]bool{"mcp__time__now": true, "mcp__github__get_issue": false} {
		_, ended, err := s.keeper.Enter(t.Context(), gateway.Call{Tool: name, Public: name, Header: header})
		if (err == nil) != want {
			t.Errorf("%s: %v, want allowed %v", name, err, want)
		}
		if ended != nil {
			ended(gateway.Outcome{})
		}
	}
}

// A gateway entry, once required, is the only way in: before it is
// applied (serve's start, or an entry that failed to apply), and after it
// is removed by a reload, no call passes the Gate and nothing is listed.
// Without Require, no entry means an open gateway, as before; so it does
// after Unrequire while none was ever applied.
func TestRequiredEntryFailsClosed(t *testing.T) {
	call := gateway.Call{Tool: "mcp__time__now", Public: "mcp__time__now"}
	allowed := func(k *Keeper) bool {
		_, ended, err := k.Enter(t.Context(), call)
		if ended != nil {
			ended(gateway.Outcome{})
		}
		listed := k.Screen(t.Context(), nil, "")(gateway.OfferTool, call.Public)
		if (err == nil) != listed {
			t.Errorf("Enter says %v but Screen lists it: %v", err, listed)
		}
		return err == nil
	}
	open := newServed(t, Options{})
	if !allowed(open.keeper) {
		t.Errorf("no gateway entry, none required: the call was refused")
	}
	s := newServed(t, Options{})
	s.keeper.Require()
	if allowed(s.keeper) {
		t.Errorf("required, not yet applied: the call passed")
	}
	s.apply(t, "policy: [{subjects: [stdio], allow: [\"*\"]}]\n", nil)
	if !allowed(s.keeper) {
		t.Errorf("applied: the call was refused")
	}
	s.keeper.Clear(s.keeper.Current())
	if allowed(s.keeper) {
		t.Errorf("entry removed: the call passed")
	}
	// Apply alone makes it required: an entry added by a reload and
	// removed by the next does not leave the gateway open.
	added := newServed(t, Options{})
	added.apply(t, "policy: [{subjects: [stdio], allow: [\"*\"]}]\n", nil)
	added.keeper.Clear(added.keeper.Current())
	if allowed(added.keeper) {
		t.Errorf("added, then removed: the call passed")
	}
	// Unrequire opens only a gateway no entry was ever applied to: an
	// entry removed before it loaded gives back the open gateway.
	if added.keeper.Unrequire() || allowed(added.keeper) {
		t.Errorf("an entry applied, then removed: Unrequire opened the gateway")
	}
	never := newServed(t, Options{})
	never.keeper.Require()
	if !never.keeper.Unrequire() || !allowed(never.keeper) {
		t.Errorf("required, never applied: Unrequire left the call refused")
	}
}

// A policy that hides every resource from its callers without a list
// saying so is logged when it is taken into use, once: a reload that
// keeps the policy says nothing again, one that fixes it says nothing.
func TestPolicyWarningLoggedOnce(t *testing.T) {
	s := newServed(t, Options{})
	const hides = "policy: [{subjects: [alice], allow: [\"mcp__github__get_*\"]}]\n"
	s.apply(t, hides, nil)
	s.apply(t, hides, nil)
	if n := strings.Count(s.logs.String(), "grants tools but no resource"); n != 1 {
		t.Errorf("the warning was logged %d times, want once:\n%s", n, s.logs.String())
	}
	s.apply(t, "policy: [{subjects: [alice], allow: [\"mcp__github__get_*\"], resources: []}]\n", nil)
	if n := strings.Count(s.logs.String(), "grants tools but no resource"); n != 1 {
		t.Errorf("an explicit resources: [] was warned about:\n%s", s.logs.String())
	}
}

// Under code mode (sessions list only its tools), a rule that grants
// tools but none of those is warned about when taken into use: its
// callers list nothing, yet call what it grants by name. A rule granting
// run_code is not, nor is any rule without code mode.
func TestPolicyWarnsOfCallersCodeModeListsNothing(t *testing.T) {
	const policy = "policy: [{subjects: [alice], allow: [\"mcp__*\", run_code]}, {subjects: [bob], allow: [\"mcp__demo__*\"]}]\n"
	s := newServed(t, Options{Listed: []string{"search_api", "describe_api", "run_code"}})
	s.apply(t, policy, nil)
	logs := s.logs.String()
	if n := strings.Count(logs, "grants tools but none of search_api, describe_api, run_code, the only tools sessions list"); n != 1 || !strings.Contains(logs, "subjects bob") {
		t.Errorf("want one warning, of bob's rule:\n%s", logs)
	}
	plain := newServed(t, Options{})
	plain.apply(t, policy, nil)
	if strings.Contains(plain.logs.String(), "the only tools sessions list") {
		t.Errorf("warned without code mode:\n%s", plain.logs.String())
	}
}

// A call this replica follows for another that began it (a task taken
// over) is audited once, for the identity that began it, with its
// outcome and why this replica writes it; a call handed over reads
// handed_over; a call whose replica was lost reads failed, saying so,
// with the session and client it had. Resume decides nothing: a denied
// caller's call is still recorded, since it was admitted where it began.
func TestResumedCallsAudited(t *testing.T) {
	s := newServed(t, Options{})
	s.apply(t, "policy: [{subjects: [alice], allow: [\"*\"]}]\naudit: {file: DIR/audit.jsonl}\n", nil)
	s.keeper.Resume(gateway.Call{Tool: "mcp__time__now", Public: "mcp__time__now"}, "alice")(gateway.Outcome{})
	s.keeper.Resume(gateway.Call{Tool: "mcp__time__now", Public: "mcp__time__now"}, "bob")(gateway.Outcome{HandedOver: true})
	s.keeper.Resume(gateway.Call{Tool: "mcp__time__now", Public: "mcp__time__now", Session: "s1", Client: "c1"}, "alice")(gateway.Outcome{Failed: true, Lost: true})
	type line struct{ Identity, Name, Session, Client, Outcome, Reason string }
	got := auditLines[line](t, s)
	const why = "taken over from the replica that began it"
	want := []line{{"alice", "mcp__time__now", "", "", "ok", why}, {"bob", "mcp__time__now", "", "", "handed_over", why},
		{"alice", "mcp__time__now", "s1", "c1", "failed", "the gateway replica running this task was lost (its lease lapsed) before the call ended; ended failed by another replica"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the audit trail (-want +got):\n%s", d)
	}
}

// A task's call whose task another replica ended as lost while this one
// stalled (gateway.Outcome.EndedElsewhere) gets no line here: that
// replica wrote its one (Resume).
func TestCallEndedElsewhereNotAudited(t *testing.T) {
	s := newServed(t, Options{})
	s.apply(t, "auth: {tokens: {alice: ALICE}}\npolicy: [{subjects: [alice], allow: [\"*\"]}]\naudit: {file: DIR/audit.jsonl}\n", map[string]string{"ALICE": "tok"})
	for _, o := range []gateway.Outcome{{EndedElsewhere: true}, {}} {
		_, end, err := s.keeper.Enter(t.Context(), gateway.Call{Tool: "mcp__time__now", Public: "mcp__time__now", Header: http.Header{"Authorization": {"Bearer tok"}}})
		if err != nil {
			t.Fatalf("alice's call: %v", err)
		}
		if err := end(o); err != nil {
			t.Fatalf("the end of alice's call (%+v): %v", o, err)
		}
	}
	type line struct{ Identity, Name, Outcome string }
	if d := cmp.Diff([]line{{"alice", "mcp__time__now", "ok"}}, auditLines[line](t, s)); d != "" {
		t.Errorf("the audit trail (-want +got):\n%s", d)
	}
}

// A reload of the gateway entry while calls run loses none of their
// lines: a call admitted before it is written when it ends, to the same
// trail when the file stayed (one writer, so the chain holds), and to
// the trail in force when the file changed.
func TestReloadKeepsTheLinesOfCallsInFlight(t *testing.T) {
	s := newServed(t, Options{})
	const cfg = "auth: {tokens: {alice: ALICE}}\npolicy: [{subjects: [alice], allow: [\"*\"]}]\naudit: {file: DIR/FILE}\nrateLimit: {perIdentity: LIMIT/m}\n"
	apply := func(file, limit string) {
		s.apply(t, strings.NewReplacer("FILE", file, "LIMIT", limit).Replace(cfg), map[string]string{"ALICE": "tok"})
	}
	enter := func(tool string) func(gateway.Outcome) error {
		_, end, err := s.keeper.Enter(t.Context(), gateway.Call{Tool: tool, Public: tool, Header: http.Header{"Authorization": {"Bearer tok"}}})
		if err != nil {
			t.Fatalf("alice's call of %s: %v", tool, err)
		}
		return end
	}
	apply("audit.jsonl", "600")
	endFirst := enter("first")
	apply("audit.jsonl", "601") // the same trail
	enter("second")(gateway.Outcome{})
	endFirst(gateway.Outcome{})
	endThird := enter("third")
	apply("other.jsonl", "601") // another trail
	endThird(gateway.Outcome{})
	type line struct{ Name, Outcome string }
	if d := cmp.Diff([]line{{"second", "ok"}, {"first", "ok"}}, auditLines[line](t, s)); d != "" {
		t.Errorf("the trail kept across the reload (-want +got):\n%s", d)
	}
	if rep, err := audit.Verify(strings.NewReader(readFile(t, auditPath(s)))); err != nil || rep.Lines != 2 {
		t.Errorf("its chain: %+v, %v", rep, err)
	}
	if other := readFile(t, filepath.Join(s.dir, "other.jsonl")); !strings.Contains(other, `"name":"third"`) {
		t.Errorf("the new trail has no line of the call admitted before it: %q", other)
	}
}

// While the config's gateway entry is not in force (it will not load as
// written) and serve has no --token-env token, no token can be judged: a
// request, whatever its token, is answered 503 with Retry-After saying
// why, with no WWW-Authenticate. It was answered 401 with
// WWW-Authenticate, which tells an OAuth client to drop a token that
// passes once the entry loads, and said a valid token was required where
// none was.
func TestRequestsWhileNoGatewayEntryIsInForce(t *testing.T) {
	s := newServed(t, Options{})
	s.keeper.RequireUnloaded("it is invalid: gateway.alow: unknown key")
	for _, token := range []string{"", "some-token"} {
		req, _ := http.NewRequest(http.MethodPost, s.resource(), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || resp.Header.Get("WWW-Authenticate") != "" ||
			!strings.Contains(string(body), "gateway entry is not in force (it is invalid: gateway.alow") {
			t.Errorf("token %q while no gateway entry is in force: %d, Retry-After %q, WWW-Authenticate %q, %q; want 503 saying why, Retry-After and no WWW-Authenticate",
				token, resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("WWW-Authenticate"), body)
		}
	}
}
