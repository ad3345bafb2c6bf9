package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// identityConfig is a backend over HTTP and a gateway entry: JWTs of the
// issuer, a static token "ci", a policy and an audit trail.
const identityConfig = `- id: gh
  name: mcp-client
  config: {serverName: gh, transport: streamable-http, url: %s}
- id: gw
  name: gateway
  config:
    auth: {issuer: %s, audience: %s, tokens: {ci: GW_CI_AUTH}}
    policy:
      - subjects: [alice]
        allow: ["*"]
      - subjects: [ci]
        allow: [%s]
    audit: {file: %s}
`

// nodeBearer runs the TypeScript SDK's client with token against url.
func nodeBearer(t *testing.T, url, token, tool, args string) (tools []string, callErr int) {
	t.Helper()
	out, _ := runNodeScript(t, "node_bearer.mjs", url, token, tool, args)
	var got struct {
		Tools     []string `json:"tools"`
		CallError struct {
			Code int `json:"code"`
		} `json:"callError"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node client printed %q: %v", out, err)
	}
	return got.Tools, got.CallError.Code
}

// `mcpbridge serve --http` with a gateway entry: the TypeScript SDK's
// client with a JWT and with a static token sees and calls what the
// policy allows each; no client token reaches the backend; the metadata
// and 401 follow the spec; a policy edit reaches the open session; and
// `audit verify` passes the trail, then finds an edited line.
func TestServeGatewayIdentity(t *testing.T) {
	is := mcptest.NewIssuer(t)
	backend := mcptest.NewHTTPServer(t, mcppeer.Fixture(mcppeer.FixtureOptions{}), mcptest.HTTPOptions{})
	trail := filepath.Join(t.TempDir(), "audit.jsonl")
	const aud = "https://mcp.example.com/mcp"
	fixture := fixtureEntries(t, "fx")
	cfg := writeConfig(t, fixture+fmt.Sprintf(identityConfig, backend.URL, is.URL(), aud, `"mcp__gh__greet"`, trail))
	p := startServing(t, []string{"GW_CI_AUTH=ci-static-token"}, "serve", "--http", "127.0.0.1:0", "--config", cfg)
	jwt := is.Sign(t, is.Claims("alice", aud, nil))

	aliceTools, code := nodeBearer(t, p.url, jwt, "mcp__gh__add", `{"a":1,"b":2}`)
	if code != 0 || len(aliceTools) < 3 {
		t.Fatalf("alice: tools %v, call error %d; want every tool and the call served", aliceTools, code)
	}
	ciTools, code := nodeBearer(t, p.url, "ci-static-token", "mcp__gh__add", `{"a":1,"b":2}`)
	// A tool the policy denies is hidden: its call is answered as one of
	// a tool that does not exist (-32602).
	if d := cmp.Diff([]string{"mcp__gh__greet"}, ciTools); d != "" || code != -32602 {
		t.Fatalf("ci: call error %d (want -32602, as for an unknown tool), tools (-want +got):\n%s", code, d)
	}
	kids := childrenOf(p.pid)
	if len(kids) != 1 {
		t.Errorf("serve has children %v, want the fixture server", kids)
	}
	for _, pid := range kids {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil || strings.Contains(string(env), "ci-static-token") || strings.Contains(string(env), "GW_CI_AUTH") {
			t.Errorf("server %d's environment holds the static token (%v)", pid, err)
		}
	}
	for _, h := range backend.Headers() {
		if v := h.Get("Authorization"); v != "" {
			t.Errorf("the backend got a client's Authorization header %q", v)
		}
	}

	resp, err := http.Post(p.url, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`; resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != want {
		t.Errorf("no token: %d %q, want 401 %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), want)
	}
	resp, err = http.Get(p.base() + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("metadata: %d, want 200 without a token", resp.StatusCode)
	}

	// The policy is hot-reloaded into an open session.
	client := mcp.NewClient(&mcp.Implementation{Name: "ci-bot", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: p.url, HTTPClient: &http.Client{Transport: bearer{"ci-static-token"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := os.WriteFile(cfg, fmt.Appendf([]byte(fixture), identityConfig, backend.URL, is.URL(), aud, `"mcp__gh__greet", "mcp__gh__add"`, trail), 0o644); err != nil {
		t.Fatal(err)
	}
	waitTools(t, cs, "mcp__gh__greet", "mcp__gh__add")
	if got, isErr := callText(t, cs, "mcp__gh__add", `{"a":1,"b":2}`); isErr {
		t.Errorf("ci's call after the reload: %q", got)
	}
	// A policy whose CEL does not compile is refused where it is; the
	// running policy stays.
	broken := strings.Replace(string(fmt.Appendf([]byte(fixture), identityConfig, backend.URL, is.URL(), aud, `"mcp__gh__greet"`, trail)),
		"      - subjects: [ci]\n", "      - when: 'claims.scope.contains('\n        allow: [\"*\"]\n      - subjects: [ci]\n", 1)
	if err := os.WriteFile(cfg, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	mcptest.Eventually(t, 30*time.Second, func() bool { return strings.Contains(p.stderr.String(), "does not compile") }, "the reload to report the CEL error")
	if !strings.Contains(p.stderr.String(), "config.policy[1].when: does not compile") {
		t.Errorf("the reload's error is not positioned:\n%s", p.stderr.String())
	}
	if got, isErr := callText(t, cs, "mcp__gh__add", `{"a":1,"b":2}`); isErr {
		t.Errorf("ci's call after a broken reload: %q (the old policy should stay)", got)
	}
	req, _ := http.NewRequest(http.MethodGet, p.base()+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer ci-static-token")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(metrics), `mcpbridge_gateway_refused_total{reason="denied"} 1`) {
		t.Errorf("/metrics does not count ci's denied call:\n%s", metrics)
	}
	cs.Close()
	p.stop(t)

	r := mcpbridge(t, "", "audit", "verify", trail)
	if r.code != 0 || !strings.Contains(r.stdout, "entries, chain intact") {
		t.Fatalf("audit verify: %d %q %q", r.code, r.stdout, r.stderr)
	}
	data, err := os.ReadFile(trail)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"outcome":"denied"`) || !strings.Contains(string(data), `"identity":"alice"`) {
		t.Errorf("the trail lacks alice's call or ci's denial:\n%s", data)
	}
	os.WriteFile(trail, []byte(strings.Replace(string(data), `"identity":"alice"`, `"identity":"carol"`, 1)), 0o600)
	if r := mcpbridge(t, "", "audit", "verify", trail); r.code != 1 || !strings.Contains(r.stderr, "the chain is broken") {
		t.Errorf("audit verify of an edited trail: %d %q", r.code, r.stderr)
	}
}

// Commands other than serve take a gateway entry as valid and ignore it.
func TestGatewayEntryIgnoredOutsideServe(t *testing.T) {
	t.Setenv("GW_IGNORED_AUTH", "x")
	cfg := writeConfig(t, fixtureEntries(t, "fx")+"- {id: gw, name: gateway, config: {auth: {tokens: {ci: GW_IGNORED_AUTH}}, policy: [{subjects: [nobody], allow: [none]}]}}\n")
	if r := mcpbridge(t, "", "validate", "--config", cfg); r.code != 0 {
		t.Fatalf("validate: %d %s", r.code, r.stderr)
	}
	r := mcpbridge(t, "", "call", "--config", cfg, "mcp__fx__greet", `{"name":"cli"}`)
	if r.code != 0 || !strings.Contains(r.stdout, "Hello, cli!") {
		t.Fatalf("call with a policy that would deny it: %d %q %q", r.code, r.stdout, r.stderr)
	}
}
