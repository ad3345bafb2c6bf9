package cli

import (
	"encoding/json"
	"fmt"
	"maps"
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
	dump, entry := envDumpEntry(t, map[string]string{"PASSED": "${PASSED}"}) // passed on purpose: the child gets it
	cfg := writeConfig(t, entry+`- id: gh
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
`)
	got := childEnvOf(t, dump, "status", "--config", cfg)
	withheldFrom(t, got, "LLMAUTH", "GHPAT", "RPASS", "URLPASS", "OCLIENT")
	for _, kv := range []string{"PASSED=passed-u", "GH_HOST=127.0.0.1:1"} {
		if !strings.Contains(got, kv+"\n") {
			t.Errorf("the child lacks %s:\n%s", kv, got)
		}
	}
}

// envDumpEntry is a config entry, id dump, of a stdio server, a real
// child that writes its environment to the returned file before it
// serves; env is its own env, which passes variables on purpose.
func envDumpEntry(t *testing.T, env map[string]string) (dump, entry string) {
	t.Helper()
	dump, server := envDumpServer(t, env)
	server["serverName"], server["transport"] = "dump", "stdio"
	cfg, _ := json.Marshal(server)
	return dump, fmt.Sprintf("- id: dump\n  name: mcp-client\n  config: %s\n", cfg)
}

// envDumpServer is the server of envDumpEntry as another client's
// mcpServers JSON has it: command, args and env.
func envDumpServer(t *testing.T, env map[string]string) (dump string, server map[string]any) {
	t.Helper()
	dump = filepath.Join(t.TempDir(), "env")
	cmd, args, childEnv := mcptest.ChildCommand(t, "fixture")
	maps.Copy(childEnv, env)
	script := fmt.Sprintf(`env > %q; exec %q %s`, dump, cmd, strings.Join(args, " "))
	return dump, map[string]any{"command": "/bin/sh", "args": []string{"-c", script}, "env": childEnv}
}

// childEnvOf runs mcpbridge with args and returns the environment the
// dump entry's child (envDumpEntry) started with.
func childEnvOf(t *testing.T, dump string, args ...string) string {
	t.Helper()
	r := mcpbridge(t, "", args...)
	got, err := os.ReadFile(dump)
	if err != nil {
		t.Fatalf("the child wrote no environment (%v): %s exit %d\n%s%s", err, args[0], r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout+r.stderr, "dump") {
		t.Errorf("%s does not show the server:\n%s%s", args[0], r.stdout, r.stderr)
	}
	return string(got)
}

// withheldFrom checks that the environment env holds none of names, by
// name or by value.
func withheldFrom(t *testing.T, env string, names ...string) {
	t.Helper()
	for _, name := range names {
		if strings.Contains(env, name+"=") || strings.Contains(env, os.Getenv(name)) {
			t.Errorf("the child inherited %s, which the config names as a credential", name)
		}
	}
}

// An entry that is disabled, or whose config is invalid (it fails alone),
// names credentials all the same: the user may enable or fix it, and the
// variables are in their environment now. They reached every child, as
// the names were read only from the configs that were decoded.
func TestUndecodedEntriesCredentialsWithheld(t *testing.T) {
	for k, v := range map[string]string{"PARKEDPAT": "parked-x", "BROKENPAT": "broken-y", "PARKEDLLM": "llm-w", "BROKENGW": "gw-v", "BROKENRPASS": "redis-u"} {
		t.Setenv(k, v)
	}
	dump, entry := envDumpEntry(t, nil)
	cfg := writeConfig(t, entry+`- id: parked
  name: mcp-client
  disabled: true
  config:
    serverName: parked
    transport: streamable-http
    url: "http://127.0.0.1:1/mcp"
    headers: {Authorization: "Bearer ${PARKEDPAT}"}
- id: broken
  name: mcp-client
  config:
    serverName: broken
    transport: streamable-http
    url: "http://127.0.0.1:1/mcp"
    headers: {Authorization: "Bearer ${BROKENPAT}"}
    toolCallTimeoutMs: -1
- {id: llm, name: model, disabled: true, config: {baseURL: "http://127.0.0.1:1/v1", model: m, apiKeyEnv: PARKEDLLM}}
- {id: gw, name: gateway, config: {auth: {tokens: {ci: BROKENGW}}, store: {redis: {url: "redis://:${BROKENRPASS}@127.0.0.1:6379"}}, questionWaitMs: -1}}
`)
	withheldFrom(t, childEnvOf(t, dump, "status", "--config", cfg), "PARKEDPAT", "BROKENPAT", "PARKEDLLM", "BROKENGW", "BROKENRPASS")
}

// An entry that fails to decode for a misspelling (its kind, name:
// mcp-clinet; a key, header: for headers:; confg: for config:), or of a
// kind nothing reads even disabled, may hold a credential wherever it is
// written: every variable it references is withheld, but for those every
// shell sets (HOME, PATH), which every child needs. They reached every
// child, only the fields its kind reads being taken.
func TestMisspeltEntriesCredentialsWithheld(t *testing.T) {
	for k, v := range map[string]string{"KINDPAT": "kind-x", "HEADERPAT": "header-y", "ENTRYPAT": "entry-z", "PARKEDKIND": "parked-w"} {
		t.Setenv(k, v)
	}
	dump, entry := envDumpEntry(t, nil)
	cfg := writeConfig(t, entry+`- id: kind
  name: mcp-clinet
  config:
    serverName: kind
    transport: streamable-http
    url: "http://127.0.0.1:1/mcp"
    headers: {Authorization: "Bearer ${KINDPAT}"}
- id: header
  name: mcp-client
  config:
    serverName: header
    transport: streamable-http
    url: "http://127.0.0.1:1/mcp"
    header: {Authorization: "Bearer ${HEADERPAT}"}
- id: entry
  name: mcp-client
  confg: {serverName: entry, transport: stdio, command: x, env: {T: "${ENTRYPAT}", PATH: "${PATH}", HOME: "${HOME}"}}
- {id: parked, name: mcp-clinet, disabled: true, config: {headers: {Authorization: "Bearer ${PARKEDKIND}"}}}
`)
	got := childEnvOf(t, dump, "status", "--config", cfg)
	withheldFrom(t, got, "KINDPAT", "HEADERPAT", "ENTRYPAT", "PARKEDKIND")
	for _, name := range []string{"HOME", "PATH"} {
		if !strings.Contains(got, name+"="+os.Getenv(name)+"\n") {
			t.Errorf("the child lacks %s:\n%s", name, got)
		}
	}
}

// A server of another client's mcpServers JSON with a mistake (a
// misspelt "header" or "argz", a "comand" that leaves it nothing to run)
// may hold a credential wherever it is written, as an entry of mcpbridge
// YAML may: every variable it references is withheld, ${NAME} or Gemini
// CLI's $NAME, but for those every shell sets. They reached every child,
// the conversion leaving the misspelt field, and with no command every
// field, out of the entry whose variables are taken.
func TestMisspeltImportedServersCredentialsWithheld(t *testing.T) {
	for k, v := range map[string]string{"HEADERPAT": "header-y", "COMANDPAT": "comand-z", "ARGPAT": "arg-w"} {
		t.Setenv(k, v)
	}
	dump, server := envDumpServer(t, nil)
	servers := map[string]any{
		"dump":   server,
		"header": map[string]any{"type": "http", "url": "http://127.0.0.1:1/mcp", "header": map[string]string{"Authorization": "Bearer ${HEADERPAT}"}},
		"comand": map[string]any{"comand": "npx", "env": map[string]string{"T": "${COMANDPAT}", "PATH": "${PATH}", "HOME": "${HOME}"}},
		"argz":   map[string]any{"command": "true", "argz": []string{"--token", "$ARGPAT"}},
	}
	data, _ := json.Marshal(map[string]any{"mcpServers": servers})
	cfg := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	writeFileAt(t, cfg, string(data))
	got := childEnvOf(t, dump, "status", "--config", cfg)
	withheldFrom(t, got, "HEADERPAT", "COMANDPAT", "ARGPAT")
	for _, name := range []string{"HOME", "PATH"} {
		if !strings.Contains(got, name+"="+os.Getenv(name)+"\n") {
			t.Errorf("the child lacks %s:\n%s", name, got)
		}
	}
}

// A disabled entry, whose config is not checked, with a credential under
// a misspelt key (header:, or "header" in another client's JSON) holds it
// all the same: the user may enable it, and the variable holds the secret
// now. Every variable it references is withheld, as for an entry that
// fails to validate; they reached every child, a disabled entry's config
// being read only where its kind looks.
func TestDisabledMisspeltEntriesCredentialsWithheld(t *testing.T) {
	t.Setenv("PARKEDYAML", "parked-x")
	t.Setenv("PARKEDJSON", "parked-y")
	dump, entry := envDumpEntry(t, nil)
	cfg := writeConfig(t, entry+`- id: parked
  name: mcp-client
  disabled: true
  config:
    serverName: parked
    transport: streamable-http
    url: "http://127.0.0.1:1/mcp"
    header: {Authorization: "Bearer ${PARKEDYAML}"}
`)
	withheldFrom(t, childEnvOf(t, dump, "status", "--config", cfg), "PARKEDYAML")

	dump, server := envDumpServer(t, nil)
	data, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"dump":   server,
		"parked": map[string]any{"url": "http://127.0.0.1:1/mcp", "disabled": true, "header": map[string]string{"Authorization": "Bearer ${PARKEDJSON}"}},
	}})
	cfg = filepath.Join(t.TempDir(), "mcp.json")
	writeFileAt(t, cfg, string(data))
	withheldFrom(t, childEnvOf(t, dump, "status", "--config", cfg), "PARKEDJSON")
}

// The credentials of a user config's entry that the project config
// replaces (the same id) are credentials all the same: the variable is in
// the user's environment, for the user's entry. It reached every child of
// the project, the replaced entry being left out of the merged config
// before its variables were read.
func TestReplacedEntryCredentialsWithheld(t *testing.T) {
	t.Setenv("USERPAT", "user-x")
	writeFileAt(t, userScope(t), `- id: gh
  name: mcp-client
  config:
    serverName: gh
    transport: streamable-http
    url: "http://127.0.0.1:1/mcp"
    headers: {Authorization: "Bearer ${USERPAT}"}
`)
	t.Chdir(t.TempDir())
	dump, entry := envDumpEntry(t, nil)
	writeFileAt(t, "mcpbridge.yaml", entry+`- id: gh
  name: mcp-client
  config:
    serverName: gh
    transport: streamable-http
    url: "http://127.0.0.1:1/mcp"
`)
	withheldFrom(t, childEnvOf(t, dump, "status"), "USERPAT")
}

// A variable in the default of a URL's credential, ${PASS:-${OLDPASS}},
// holds that credential when the first is unset, as the user's old
// variable does here. It reached every child, as only the variable a
// reference starts with was taken for the URL's userinfo or query.
func TestDefaultedURLCredentialsWithheld(t *testing.T) {
	t.Setenv("OLDQ", "old-query-x")
	t.Setenv("OLDRP", "old-redis-y")
	dump, entry := envDumpEntry(t, nil)
	cfg := writeConfig(t, entry+`- id: q
  name: mcp-client
  config:
    serverName: q
    transport: streamable-http
    url: "http://127.0.0.1:1/mcp?auth=${NEWQ:-${OLDQ}}"
- {id: gw, name: gateway, config: {store: {redis: {url: "redis://:${NEWRP:-${OLDRP}}@127.0.0.1:6379"}}}}
`)
	withheldFrom(t, childEnvOf(t, dump, "status", "--config", cfg), "OLDQ", "OLDRP")
}

// A field that names the variable holding a credential (a model's
// apiKeyEnv, a gateway token's variable, assertionEnv) written as a
// reference, ${NAME}, fails to validate, and still names NAME: it reached
// every child, as only a value that is a name was taken.
func TestReferenceForVariableNameWithheld(t *testing.T) {
	for k, v := range map[string]string{"LLMREF": "llm-x", "GWREF": "gw-y", "JWTREF": "jwt-z"} {
		t.Setenv(k, v)
	}
	dump, entry := envDumpEntry(t, nil)
	cfg := writeConfig(t, entry+`- {id: llm, name: model, config: {baseURL: "http://127.0.0.1:1/v1", model: m, apiKeyEnv: "${LLMREF}"}}
- {id: gw, name: gateway, config: {auth: {tokens: {ci: "${GWREF}"}}}}
- id: wl
  name: mcp-client
  config:
    serverName: wl
    transport: streamable-http
    url: "http://127.0.0.1:1/mcp"
    oauth: {grant: jwt_bearer, clientId: me, assertionEnv: "${JWTREF}"}
`)
	withheldFrom(t, childEnvOf(t, dump, "status", "--config", cfg), "LLMREF", "GWREF", "JWTREF")
}

// A model's baseURL carries a credential in its query as an mcp-client
// URL does (a proxy's ?key=${PROXYPASS}), and the endpoint gets it with
// every request: it reached every child, as only apiKeyEnv was taken.
func TestModelBaseURLCredentialsWithheld(t *testing.T) {
	t.Setenv("PROXYPASS", "proxy-x")
	dump, entry := envDumpEntry(t, nil)
	cfg := writeConfig(t, entry+`- {id: llm, name: model, config: {baseURL: "http://127.0.0.1:1/v1?auth=${PROXYPASS}", model: m, apiKey: none}}
`)
	withheldFrom(t, childEnvOf(t, dump, "status", "--config", cfg), "PROXYPASS")
}
