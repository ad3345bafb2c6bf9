package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// The variables the config names as holding credentials, whatever their
// names (a model's apiKeyEnv, a header's ${VAR}, a URL's userinfo, the
// gateway store's redis password, an OAuth client secret), reach no
// stdio server, a real child that writes its environment out, unless its
// own env passes one; a variable of a URL's host is no credential and is
// inherited. They used to reach every child, their names not looking
// like secrets.
func TestConfigCredentialsWithheldFromChildren(t *testing.T) {
	for k, v := range map[string]string{"LLMAUTH": "llm-x", "GHPAT": "gh-y", "RPASS": "redis-z", "URLPASS": "url-w", "OCLIENT": "oauth-v", "PASSED": "passed-u", "GH_HOST": "127.0.0.1:1"} {
		t.Setenv(k, v)
	}
	dump := filepath.Join(t.TempDir(), "env")
	cmd, args, env := mcptest.ChildCommand(t, "fixture")
	env["PASSED"] = "${PASSED}" // passed on purpose: the child gets it
	envJSON, _ := json.Marshal(env)
	script := fmt.Sprintf(`env > %q; exec %q %s`, dump, cmd, strings.Join(args, " "))
	cfg := writeConfig(t, fmt.Sprintf(`- id: dump
  name: mcp-client
  config:
    serverName: dump
    transport: stdio
    command: /bin/sh
    args: ["-c", %q]
    env: %s
- id: gh
  name: mcp-client
  config:
    serverName: gh
    transport: streamable-http
    url: "http://${GH_HOST}/mcp"
    headers: {Authorization: "Bearer ${GHPAT}"}
- id: basic
  name: mcp-client
  config:
    serverName: basic
    transport: streamable-http
    url: "http://me:${URLPASS}@127.0.0.1:1/mcp"
    oauth: {clientId: me, clientSecret: "${OCLIENT}"}
- id: passed
  name: mcp-client
  config:
    serverName: passed
    transport: streamable-http
    url: "http://127.0.0.1:1/mcp"
    headers: {X-Key: "${PASSED}"}
- {id: llm, name: model, config: {baseURL: "http://127.0.0.1:1/v1", model: m, apiKeyEnv: LLMAUTH}}
- {id: gw, name: gateway, config: {auth: {tokens: {ci: PASSED}}, store: {redis: {url: "redis://:${RPASS}@127.0.0.1:6379"}}}}
`, script, envJSON))
	r := mcpbridge(t, "", "status", "--config", cfg)
	got, err := os.ReadFile(dump)
	if err != nil {
		t.Fatalf("the child wrote no environment (%v): status %d\n%s%s", err, r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout+r.stderr, "dump") {
		t.Errorf("status does not show the server:\n%s%s", r.stdout, r.stderr)
	}
	for _, name := range []string{"LLMAUTH", "GHPAT", "RPASS", "URLPASS", "OCLIENT"} {
		if strings.Contains(string(got), name+"=") || strings.Contains(string(got), os.Getenv(name)) {
			t.Errorf("the child inherited %s, which the config names as a credential", name)
		}
	}
	for _, kv := range []string{"PASSED=passed-u", "GH_HOST=127.0.0.1:1"} {
		if !strings.Contains(string(got), kv+"\n") {
			t.Errorf("the child lacks %s:\n%s", kv, got)
		}
	}
}
