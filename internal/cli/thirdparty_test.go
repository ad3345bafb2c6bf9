package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// End to end against servers we did not write: the official reference
// servers from npm (docs/upstream.md §8.4 cases 113–119), installed by `make test`
// from the committed lockfile.

func everythingConfig(t *testing.T) string {
	bin := mcptest.ThirdPartyBin(t, "mcp-server-everything")
	return writeConfig(t, fmt.Sprintf(`- id: everything
  name: mcp-client
  config:
    serverName: everything
    transport: stdio
    command: %s
    args: [stdio]
    toolCallTimeoutMs: 30000
`, bin))
}

func TestServerEverything(t *testing.T) {
	t.Parallel()
	cfg := everythingConfig(t)
	r := mcpbridge(t, "", "tools", "--json", "--config", cfg)
	if r.code != 0 {
		t.Fatalf("tools: exit %d\n%s", r.code, r.stderr)
	}
	var tools []struct {
		Function struct{ Name string } `json:"function"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &tools); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range tools {
		names[tl.Function.Name] = true
	}
	for _, want := range []string{"mcp__everything__echo", "mcp__everything__get-sum", "mcp__everything__get-tiny-image", "mcp__everything__get-structured-content"} {
		if !names[want] {
			t.Errorf("%s missing from %v", want, names)
		}
	}
	if len(tools) < 8 {
		t.Errorf("only %d tools", len(tools))
	}

	saveDir := t.TempDir()
	calls := []struct {
		name, args string
		code       int
		has        []string
	}{
		{"mcp__everything__echo", `{"message":"hello"}`, 0, []string{"Echo: hello"}},
		{"mcp__everything__get-sum", `{"a":3,"b":7}`, 0, []string{"10"}},
		{"mcp__everything__get-tiny-image", `{}`, 0, []string{"[image saved: " + saveDir + "/"}},
		{"mcp__everything__echo", `{}`, 1, []string{"Error: "}},
	}
	sideBySide(4, len(calls), func(i int) {
		c := calls[i]
		r := mcpbridge(t, "", "call", "--config", cfg, "--save-dir", saveDir, c.name, c.args)
		if r.code != c.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", c.name, r.code, c.code, r.stdout, r.stderr)
		}
		for _, h := range c.has {
			if !strings.Contains(r.stdout, h) {
				t.Errorf("%s: stdout %q lacks %q", c.name, r.stdout, h)
			}
		}
	})

	// Structured output arrives in the canonical value, validated against
	// the tool's outputSchema.
	r = mcpbridge(t, "", "call", "--json", "--config", cfg, "mcp__everything__get-structured-content", `{"location":"New York"}`)
	var res struct {
		IsError bool `json:"isError"`
		Value   struct {
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"value"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.IsError || res.Value.StructuredContent["temperature"] == nil {
		t.Errorf("get-structured-content: %v %s %s", err, r.stdout, r.stderr)
	}
}

// filesystemConfig is a config with the npm filesystem server bin, given
// the directory dir in its args and root as its roots.
func filesystemConfig(t *testing.T, bin, dir, root string) string {
	return writeConfig(t, fmt.Sprintf(`- id: fs
  name: mcp-client
  config:
    serverName: filesystem
    transport: stdio
    command: %s
    args: [%q]
    roots: [%q]
`, bin, dir, root))
}

func TestServerFilesystem(t *testing.T) {
	bin := mcptest.ThirdPartyBin(t, "mcp-server-filesystem")
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := filesystemConfig(t, bin, dir, dir)
	file := filepath.Join(dir, "note.txt")
	args, _ := json.Marshal(map[string]string{"path": file, "content": "written through mcpbridge"})
	if r := mcpbridge(t, "", "call", "--config", cfg, "mcp__filesystem__write_file", string(args)); r.code != 0 {
		t.Fatalf("write_file: %+v", r)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "written through mcpbridge" {
		t.Fatalf("file on disk: %q, %v", b, err)
	}
	args, _ = json.Marshal(map[string]string{"path": file})
	if r := mcpbridge(t, "", "call", "--config", cfg, "mcp__filesystem__read_text_file", string(args)); r.code != 0 || !strings.Contains(r.stdout, "written through mcpbridge") {
		t.Errorf("read_text_file: %+v", r)
	}
	if err := os.WriteFile(filepath.Join(dir, "listed.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	args, _ = json.Marshal(map[string]string{"path": dir})
	if r := mcpbridge(t, "", "call", "--config", cfg, "mcp__filesystem__list_directory", string(args)); r.code != 0 || !strings.Contains(r.stdout, "listed.txt") {
		t.Errorf("list_directory: %+v", r)
	}
	args, _ = json.Marshal(map[string]string{"path": "/etc/passwd"})
	if r := mcpbridge(t, "", "call", "--config", cfg, "mcp__filesystem__read_text_file", string(args)); r.code != 1 || !strings.Contains(r.stdout, "Error: ") {
		t.Errorf("outside the allowed dir: %+v", r)
	}
}

// The official conformance suite's client scenarios, driven through the
// real mcpbridge binary: the plain ones with --url (the suite appends the
// URL), the auth ones as `mcpbridge call --config F --oauth-headless
// mcp__c__test-tool '{}'`, F an entry for the scenario's URL whose oauth
// block carries the scenario's data, with a fresh XDG_STATE_HOME: all 26
// of the pinned suite.
func TestConformanceClient(t *testing.T) {
	conformance := mcptest.ThirdPartyBin(t, "conformance")
	bin := plainMcpbridge(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	scenarios := []clientScenario{
		{"initialize", bin + " tools --url"},
		{"tools_call", bin + ` call mcp__remote__add_numbers '{"a":2,"b":3}' --url`},
		{"sse-retry", bin + " call mcp__remote__test_reconnection --url"},
		{"elicitation-sep1034-client-defaults", bin + ` call --name c --elicit defaults mcp__c__test_client_elicitation_defaults '{}' --url`},
	}
	for _, name := range conformanceAuthScenarios() {
		scenarios = append(scenarios, clientScenario{name, exe})
	}
	runClientScenarios(t, []string{conformance}, bin, scenarios)
}

// The conformance suite 0.2's client scenarios of what the fourth wave
// added, in no requirement set yet: DPoP and workload identity (auth, as
// TestConformanceClient's), and skills over MCP (SEP-2640: listed without
// prefetching, each file checked against its digest, size and frontmatter
// before use; the verify scenarios serve a tampered file, which mcpbridge
// refuses).
func TestConformanceClientNext(t *testing.T) {
	node := mcptest.ThirdPartyBin(t, "node")
	suite := filepath.Join(filepath.Dir(filepath.Dir(node)), "conformance-next", "dist", "index.js")
	if _, err := os.Stat(suite); err != nil {
		t.Fatalf("conformance 0.2 is not installed (%v); run scripts/install-thirdparty.sh", err)
	}
	bin := plainMcpbridge(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	scenarios := []clientScenario{
		{"auth/dpop", exe}, {"auth/dpop-nonce", exe}, {"auth/wif-jwt-bearer", exe},
		{"sep-2640-client-no-prefetch", bin + " skills --url"},
	}
	for _, check := range []string{"digest", "size", "frontmatter"} {
		scenarios = append(scenarios, clientScenario{"sep-2640-client-verify-" + check, bin + " skill pdf-processing --url"})
	}
	runClientScenarios(t, []string{node, suite}, bin, scenarios)
}

// clientScenario is one client scenario of the suite and the command it
// runs (the suite appends the server's URL).
type clientScenario struct{ name, command string }

// runClientScenarios runs each scenario with the suite (its command line:
// the bin, or node and the entry point), side by side but for sse-retry,
// which times the client's reconnection and runs first, alone; bin is the
// mcpbridge an auth scenario's re-executed test binary runs.
func runClientScenarios(t *testing.T, suite []string, bin string, scenarios []clientScenario) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			if sc.name != "sse-retry" {
				t.Parallel()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			args := append(suite[1:len(suite):len(suite)], "client", "--command", sc.command, "--scenario", sc.name)
			cmd := exec.CommandContext(ctx, suite[0], args...)
			// The suite needs Node 22, which the lockfile ships beside it.
			cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(suite[0])+string(os.PathListSeparator)+os.Getenv("PATH"),
				conformanceEnv+"="+bin)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			if err != nil || !strings.Contains(out.String(), "OVERALL: PASSED") {
				t.Errorf("scenario %s: %v\n%s", sc.name, err, out.String())
			}
		})
	}
}

// conformanceAuthScenarios are the suite's auth client scenarios (0.1.16).
func conformanceAuthScenarios() []string {
	return []string{
		"auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3",
		"auth/basic-cimd", "auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported",
		"auth/scope-omitted-when-undefined", "auth/scope-step-up", "auth/scope-retry-limit",
		"auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post", "auth/token-endpoint-auth-none",
		"auth/pre-registration", "auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback",
		"auth/resource-mismatch", "auth/offline-access-scope", "auth/offline-access-not-supported",
		"auth/client-credentials-jwt", "auth/client-credentials-basic", "auth/cross-app-access-complete-flow",
	}
}

// conformanceEnv makes the re-executed test binary the client command of
// an auth scenario; its value is the mcpbridge binary to run.
const conformanceEnv = "CLITEST_CONFORMANCE_MCPBRIDGE"

// runConformanceClient plays the scenario MCP_CONFORMANCE_SCENARIO: one
// not about auth as runPlainScenario does; an auth one by writing the
// scenario's config (its URL is the last argument, its data in
// MCP_CONFORMANCE_CONTEXT) and running mcpbridge call on it with
// --oauth-headless and a fresh XDG_STATE_HOME.
func runConformanceClient(bin string) int {
	if scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO"); !strings.HasPrefix(scenario, "auth/") {
		if err := runPlainScenario(bin, scenario, os.Args[len(os.Args)-1], os.Getenv("MCP_CONFORMANCE_CONTEXT")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	dir, err := os.MkdirTemp("", "conformance-client-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	cfg, err := conformanceConfig(dir, os.Args[len(os.Args)-1], os.Getenv("MCP_CONFORMANCE_CONTEXT"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cmd := exec.Command(bin, "call", "--config", cfg, "--oauth-headless", "mcp__c__test-tool", "{}")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "state"))
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// conformanceConfig writes the config file of one auth scenario: the
// context's client, key and IdP data as the entry's oauth block.
func conformanceConfig(dir, url, context string) (string, error) {
	var c struct {
		ClientID, ClientSecret, PrivateKeyPEM, SigningAlgorithm string
		IdPClientID, IdPIDToken, IdPIssuer, IdPTokenEndpoint    string
		WorkloadJWT                                             string
	}
	if context != "" {
		var m map[string]any
		if err := json.Unmarshal([]byte(context), &m); err != nil {
			return "", fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
		get := func(k string) string { s, _ := m[k].(string); return s }
		c.ClientID, c.ClientSecret, c.PrivateKeyPEM, c.SigningAlgorithm = get("client_id"), get("client_secret"), get("private_key_pem"), get("signing_algorithm")
		c.IdPClientID, c.IdPIDToken, c.IdPIssuer, c.IdPTokenEndpoint = get("idp_client_id"), get("idp_id_token"), get("idp_issuer"), get("idp_token_endpoint")
		c.WorkloadJWT = get("valid_jwt")
	}
	o := map[string]any{"clientMetadataUrl": "https://conformance-test.local/client-metadata.json"}
	set := func(k, v string) {
		if v != "" {
			o[k] = v
		}
	}
	set("clientId", c.ClientID)
	set("clientSecret", c.ClientSecret)
	switch {
	case c.IdPIDToken != "":
		o["grant"] = "cross_app_access"
		o["idp"] = map[string]string{"issuer": c.IdPIssuer, "tokenEndpoint": c.IdPTokenEndpoint, "clientId": c.IdPClientID, "idToken": c.IdPIDToken}
	case c.WorkloadJWT != "":
		// As a platform projects it: a file the bridge reads.
		o["grant"], o["assertionFile"] = "jwt_bearer", filepath.Join(dir, "workload.jwt")
		if err := os.WriteFile(o["assertionFile"].(string), []byte(c.WorkloadJWT+"\n"), 0o600); err != nil {
			return "", err
		}
	case strings.HasPrefix(os.Getenv("MCP_CONFORMANCE_SCENARIO"), "auth/client-credentials"):
		o["grant"] = "client_credentials"
		if c.PrivateKeyPEM != "" {
			key := filepath.Join(dir, "key.pem")
			if err := os.WriteFile(key, []byte(c.PrivateKeyPEM), 0o600); err != nil {
				return "", err
			}
			o["privateKeyFile"], o["signingAlgorithm"] = key, c.SigningAlgorithm
		}
	}
	if o["grant"] != nil {
		delete(o, "clientMetadataUrl") // no authorization code: no client document
	}
	entry := []map[string]any{{"id": "c", "name": "mcp-client", "config": map[string]any{
		"serverName": "c", "transport": "streamable-http", "url": url, "oauth": o,
	}}}
	data, err := json.Marshal(entry) // JSON is YAML
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "mcpbridge.yaml")
	return path, os.WriteFile(path, data, 0o600)
}
