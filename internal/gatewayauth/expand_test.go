package gatewayauth

import (
	"encoding/pem"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// Every string of the gateway entry is written as a variable here, and
// none of the decoded config's strings may stay literal or empty: a key
// read without expansion, or a string field this config does not give
// (add it here with a ${VAR}), fails. audit.file, keyPrefix and
// groupsClaim kept their ${VAR} as written: an audit trail per replica
// (file: "audit-${REPLICA}.jsonl") was one file named audit-${REPLICA}.jsonl.
func TestEveryGatewayStringExpands(t *testing.T) {
	srv := httptest.NewTLSServer(nil)
	srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{
		"ISSUER": "https://issuer.test", "AUDIENCE": "https://gw.test/mcp", "JWKS": "https://issuer.test/jwks", "SCOPE": "mcp",
		"GROUPS_CLAIM": "roles", "CI_TOKEN": "secret", "SUBJECT": "alice", "GROUP": "ops", "WHEN": "true", "GLOB": "mcp__*",
		"RATE": "60/m", "REPLICA": "r1", "ARGS": "hash", "URL": "rediss://redis.test:6380", "PREFIX": "r1:",
		"CA": ca, "SERVER_NAME": "redis.test", "LEASE": "20s", "ADVERTISE": "http://10.0.0.5:7410",
	}
	grant := `{subjects: ["${SUBJECT}"], groups: ["${GROUP}"], scopes: ["${SCOPE}"]}`
	file := `- id: gw
  name: gateway
  config:
    auth: {issuer: "${ISSUER}", audience: "${AUDIENCE}", jwksUrl: "${JWKS}", scopes: ["${SCOPE}"], groupsClaim: "${GROUPS_CLAIM}", tokens: {ci: CI_TOKEN}}
    policy:
    - {subjects: ["${SUBJECT}"], groups: ["${GROUP}"], when: "${WHEN}", allow: ["${GLOB}"], prompts: ["${GLOB}"], resources: ["${GLOB}"], deny: ["${GLOB}"]}
    rateLimit: {perIdentity: "${RATE}"}
    audit: {file: "/tmp/x/audit-${REPLICA}.jsonl", args: "${ARGS}"}
    console: {allow: ` + grant + `, tryIt: ` + grant + `, manage: ` + grant + `}
    store: {redis: {url: "${URL}", keyPrefix: "${PREFIX}", tls: {caFile: "${CA}", serverName: "${SERVER_NAME}"}}, taskLease: "${LEASE}", advertise: "${ADVERTISE}"}
`
	cfg, err := decodeEntry(t, file, func(name string) (string, bool) { v, ok := vars[name]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	walkStrings(reflect.ValueOf(cfg), "config", func(path, s string) {
		if (s == "" && !strings.HasSuffix(path, ".Fingerprint")) || strings.Contains(s, "${") { // the kind sets the fingerprints
			t.Errorf("%s = %q after decoding: want the variable's value", path, s)
		}
	})
	if cfg.Audit.File != "/tmp/x/audit-r1.jsonl" || cfg.Store.KeyPrefix != "r1:" || cfg.Auth.GroupsClaim != "roles" {
		t.Errorf("audit.file %q, keyPrefix %q, groupsClaim %q", cfg.Audit.File, cfg.Store.KeyPrefix, cfg.Auth.GroupsClaim)
	}
}

// walkStrings calls f with every string in v (fields, elements, map
// values), by its path.
func walkStrings(v reflect.Value, path string, f func(path, s string)) {
	switch v.Kind() {
	case reflect.String:
		f(path, v.String())
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkStrings(v.Elem(), path, f)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				walkStrings(v.Field(i), path+"."+v.Type().Field(i).Name, f)
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // bytes read from a file (the CA), not a string of the entry
		}
		for i := range v.Len() {
			walkStrings(v.Index(i), path+"["+strconv.Itoa(i)+"]", f)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			walkStrings(it.Value(), path+"["+it.Key().String()+"]", f)
		}
	}
}

// A required string written with an unset variable is one problem, the
// variable's: REDIS_PASSWORD unset was followed by a second, wrong line,
// "config.store.redis.url: is required: redis://HOST:PORT…".
func TestUnsetVariableIsOneProblem(t *testing.T) {
	for _, config := range []string{
		"{store: {redis: {url: 'redis://:${REDIS_PASSWORD}@127.0.0.1:6379'}}}",
		"{audit: {file: '/var/log/audit-${REPLICA}.jsonl'}}",
		"{rateLimit: {perIdentity: '${RATE}'}}",
	} {
		_, err := decodeEntry(t, "- id: gw\n  name: gateway\n  config: "+config+"\n", func(string) (string, bool) { return "", false })
		if err == nil || strings.Count(err.Error(), "\n") != 0 || !strings.Contains(err.Error(), "is not set") {
			t.Errorf("%s: %v; want one problem, the unset variable", config, err)
		}
	}
}

// A URL the config refuses is quoted as written, never expanded: its
// variables may hold a credential (a JWKS URL's ?key=, an advertised
// URL's userinfo), and errors are printed, logged and shown in /healthz.
func TestRefusedURLsQuotedAsWritten(t *testing.T) {
	vars := map[string]string{"JK": "topsecret123", "PW": "hunter2pass"}
	for _, tc := range []struct{ name, config, written string }{
		{"jwksUrl", `{auth: {issuer: "https://issuer.test", audience: "https://gw.test/mcp", jwksUrl: "http://idp.example.com/jwks?k=${JK}"}}`, "${JK}"},
		{"issuer", `{auth: {issuer: "http://idp.example.com/?k=${JK}", audience: "https://gw.test/mcp"}}`, "${JK}"},
		{"advertise with credentials", `{store: {redis: {url: "redis://127.0.0.1:1"}, advertise: "http://u:${PW}@10.0.0.5:7410"}}`, "${PW}"},
		{"advertise without a port", `{store: {redis: {url: "redis://127.0.0.1:1"}, advertise: "http://u:${PW}@10.0.0.5"}}`, "${PW}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := "- id: gw\n  name: gateway\n  config: " + tc.config + "\n"
			_, err := decodeEntry(t, file, func(name string) (string, bool) { v, ok := vars[name]; return v, ok })
			if err == nil {
				t.Fatal("the entry was accepted, want it refused")
			}
			if msg := err.Error(); strings.Contains(msg, "topsecret123") || strings.Contains(msg, "hunter2pass") || !strings.Contains(msg, tc.written) {
				t.Errorf("the error quotes the expanded value or not the written one (%s): %s", tc.written, msg)
			}
		})
	}
}
