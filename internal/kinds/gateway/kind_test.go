package gateway

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/gatewayauth"
)

// Every bad gateway entry is an error at its file position naming the
// field; a second gateway entry is refused (one per file).
func TestDecodeErrors(t *testing.T) {
	lookup := func(k string) (string, bool) {
		if k == "SET" {
			return "v", true
		}
		return "", false
	}
	for _, c := range []struct{ name, config, want string }{
		{"unknown key", "{polcy: []}", `gw.yaml:4:6: entry "gw": config.polcy: unknown key "polcy" (did you mean "policy"?)`},
		{"audience without issuer", "{auth: {audience: https://a/mcp}}", "config.auth.issuer: is required with audience"},
		{"issuer without audience", "{auth: {issuer: https://idp}}", "config.auth.audience: is required with issuer"},
		{"plain http issuer", "{auth: {issuer: http://idp.example.com, audience: x}}", "config.auth.issuer: must be an https URL"},
		{"policy not a list", "{policy: {allow: x}}", "config.policy: must be a list of rules"},
		{"bad glob", `{policy: [{allow: ["mcp__[x"]}]}`, `is not a valid glob`},
		{"bad deny glob", `{policy: [{deny: ["mcp__[x"]}]}`, `config.policy[0].deny: "mcp__[x" is not a valid glob`},
		{"bad prompts glob", `{policy: [{allow: ["*"], prompts: ["[x"]}]}`, `config.policy[0].prompts: "[x" is not a valid glob`},
		{"rule key typo", `{policy: [{allow: ["*"], denyy: [x]}]}`,
			`config.policy[0].denyy: unknown key "denyy" (did you mean "deny"?); valid keys: subjects, groups, when, allow, prompts, resources, deny`},
		{"rule key that never was", `{policy: [{allow: ["*"], block: [x]}]}`,
			`config.policy[0].block: unknown key "block"; valid keys: subjects, groups, when, allow, prompts, resources, deny`},
		{"entry key", "{limits: {}}", `config.limits: unknown key "limits"; valid keys: auth, policy, rateLimit, audit, console, store, questionWaitMs`},
		{"console key", "{console: {alow: {subjects: [a]}}}", `config.console.alow: unknown key "alow" (did you mean "allow"?); valid keys: allow, tryIt, manage`},
		{"console grant key", "{console: {tryIt: {subject: [a]}}}", `config.console.tryIt.subject: unknown key "subject" (did you mean "subjects"?); valid keys: subjects, groups, scopes`},
		{"console grant not a list", "{console: {allow: {groups: ops}}}", `config.console.allow.groups`},
		{"store without redis", "{store: {}}", "config.store.redis: is required: {url: redis://HOST:PORT"},
		{"store key", "{store: {memcached: {}}}", `config.store.memcached: unknown key "memcached"; valid keys: redis`},
		{"redis key", "{store: {redis: {url: redis://r:6379, prefix: x}}}", `config.store.redis.prefix: unknown key "prefix"; valid keys: url, keyPrefix`},
		{"redis without url", "{store: {redis: {keyPrefix: x}}}", "config.store.redis.url: is required: redis://HOST:PORT"},
		{"redis url not redis", "{store: {redis: {url: 'http://u:pw-not-shown@r:6379/x'}}}", "config.store.redis.url: must be redis://[user:password@]HOST:PORT[/DB] or rediss://…, got http://r:6379/…"},
		{"tls of plain redis", "{store: {redis: {url: 'redis://:pw-not-shown@r:6379', tls: {serverName: r}}}}", `gw.yaml:4:64: entry "gw": config.store.redis.tls: needs a rediss:// url (redis:// is plain TCP)`},
		{"tls key", "{store: {redis: {url: 'rediss://r:6379', tls: {ca: x}}}}", `config.store.redis.tls.ca: unknown key "ca"; valid keys: caFile, serverName`},
		{"CA file missing", "{store: {redis: {url: 'rediss://r:6379', tls: {caFile: /nonexistent/ca.pem}}}}", "config.store.redis.tls.caFile: cannot be read: open /nonexistent/ca.pem: no such file or directory"},
		{"CA file not PEM", "{store: {redis: {url: 'rediss://r:6379', tls: {caFile: kind_test.go}}}}", "config.store.redis.tls.caFile: kind_test.go holds no PEM certificate"},
		{"task lease too short", "{store: {redis: {url: 'redis://r:6379'}, taskLease: 10ms}}", `config.store.taskLease: must be a duration from 500ms to 1h0m0s, like 15s; got "10ms"`},
		{"task lease not a duration", "{store: {redis: {url: 'redis://r:6379'}, taskLease: soon}}", `config.store.taskLease: must be a duration`},
		{"advertise without a port", "{store: {redis: {url: 'redis://r:6379'}, advertise: 'http://10.0.0.5'}}", `gw.yaml:4:57: entry "gw": config.store.advertise: must be http://HOST:PORT, where the other replicas reach this one, like "http://${POD_IP}:8080"; got "http://10.0.0.5"`},
		{"advertise not a URL", "{store: {redis: {url: 'redis://r:6379'}, advertise: '10.0.0.5:8080'}}", `config.store.advertise: must be http://HOST:PORT`},
		{"advertise with a path", "{store: {redis: {url: 'redis://r:6379'}, advertise: 'http://10.0.0.5:8080/mcp'}}", `config.store.advertise: must be only http://HOST:PORT (the replicas add /mcp), without a path, query or credentials; got "http://10.0.0.5:8080/mcp"`},
		{"auth key", "{auth: {issuer: https://idp, audience: x, jwks: y}}", `config.auth.jwks: unknown key "jwks" (did you mean "jwksUrl"?); valid keys: issuer, audience, jwksUrl, scopes, groupsClaim, tokens`},
		{"rate key", "{rateLimit: {perIdentity: 1/s, perUser: true}}", `config.rateLimit.perUser: unknown key "perUser"; valid keys: perIdentity, burst, perTool`},
		{"audit key", "{audit: {file: x, path: y}}", `config.audit.path: unknown key "path"; valid keys: file, args, failOpen`},
		{"CEL not a bool", `{policy: [{when: '"yes"', allow: ["*"]}]}`, "config.policy[0].when: does not compile: it is a string, want a bool"},
		{"CEL unknown variable", `{policy: [{when: 'user == "a"', allow: ["*"]}]}`, "undeclared reference to 'user'"},
		{"bad rate", "{rateLimit: {perIdentity: 120/day}}", `config.rateLimit.perIdentity: must be a count per s, m or h`},
		{"no rate", "{rateLimit: {burst: 2}}", "config.rateLimit.perIdentity: is required"},
		{"bad args mode", "{audit: {file: x, args: some}}", "config.audit.args: must be none, keys, hash or full"},
		{"no audit file", "{audit: {args: full}}", "config.audit.file: is required"},
		{"question wait zero", "{questionWaitMs: 0}", `gw.yaml:4:22: entry "gw": config.questionWaitMs: must be between 1 and 3600000, got 0`},
		{"question wait over an hour", "{questionWaitMs: 3600001}", "config.questionWaitMs: must be between 1 and 3600000, got 3600001"},
		{"question wait as a duration", "{questionWaitMs: 30s}", "config.questionWaitMs: "},
		{"question wait fractional", "{questionWaitMs: 1.5}", "config.questionWaitMs: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := "- id: gw\n  name: gateway\n  config:\n    " + strings.ReplaceAll(c.config, "\n", "\n    ") + "\n"
			_, err := host.NewCatalog(NewKind(nil)).Parse("gw.yaml", []byte(file), lookup)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Parse: %v\nwant it to contain %q", err, c.want)
			}
		})
	}
	// Only serve uses the variables' values: its kind refuses them unset;
	// the other commands' (no Keeper) take the entry.
	serve := NewKind(gatewayauth.NewKeeper(gatewayauth.Options{}))
	for config, want := range map[string]string{
		"{auth: {tokens: {ci: UNSET}}}": `token "ci": the variable UNSET is unset or empty`,
		"{store: {redis: {url: 'redis://r:6379'}, advertise: 'http://${UNSET}:8080'}}": "config.store.advertise: ",
	} {
		file := "- id: gw\n  name: gateway\n  config: " + config + "\n"
		if _, err := host.NewCatalog(serve).Parse("gw.yaml", []byte(file), lookup); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s for serve: %v\nwant it to contain %q", config, err, want)
		}
		if _, err := host.NewCatalog(NewKind(nil)).Parse("gw.yaml", []byte(file), lookup); err != nil {
			t.Errorf("%s for another command: %v, want it taken", config, err)
		}
	}
	two := "- {id: a, name: gateway, config: {auth: {tokens: {x: SET}}}}\n- {id: b, name: gateway, config: {auth: {tokens: {y: SET}}}}\n"
	if _, err := host.NewCatalog(NewKind(nil)).Parse("gw.yaml", []byte(two), lookup); err == nil || !strings.Contains(err.Error(), `is already used by entry "a"`) {
		t.Errorf("two gateway entries: %v", err)
	}
}

// A static token's new value changes the entry's fingerprint, so a reload
// applies it; the fingerprint holds no token.
func TestTokenFingerprint(t *testing.T) {
	k := NewKind(nil)
	fp := func(value string) string {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte("auth: {tokens: {ci: CI}}"), &n); err != nil {
			t.Fatal(err)
		}
		spec, err := k.Decode(n.Content[0], func(string) (string, bool) { return value, true })
		if err != nil {
			t.Fatal(err)
		}
		return spec.Config.(gatewayauth.Config).Auth.Fingerprint
	}
	a, b, c := fp("token-one"), fp("token-one"), fp("token-two")
	if a == "" || a != b || a == c || strings.Contains(a, "token") {
		t.Errorf("fingerprints %q %q %q: want equal for equal tokens only, and no token in them", a, b, c)
	}
}

// A bad store URL is reported without its password, even when it came
// from a variable.
func TestDecodeStoreURLSecret(t *testing.T) {
	lookup := func(k string) (string, bool) { return "pw-not-shown", k == "PW" }
	for _, cfg := range []string{"{store: {redis: {url: 'redis://:${PW}@r:notaport'}}}", "{store: {redis: {url: 'redis://:pw-not-shown@r:6379/db9x'}}}"} {
		file := "- id: gw\n  name: gateway\n  config: " + cfg + "\n"
		_, err := host.NewCatalog(NewKind(nil)).Parse("gw.yaml", []byte(file), lookup)
		if err == nil || !strings.Contains(err.Error(), "config.store.redis.url:") || strings.Contains(err.Error(), "pw-not-shown") {
			t.Errorf("%s: %v; want a url error without the password", cfg, err)
		}
	}
	k := NewKind(nil)
	spec, err := k.Decode(mapping(t, "{store: {redis: {url: 'redis://:${PW}@r:6379'}}}"), lookup)
	if err != nil {
		t.Fatal(err)
	}
	st := spec.Config.(gatewayauth.Config).Store
	for url, same := range map[string]bool{"redis://:pw-not-shown@r:6379": true, "redis://:another@r:6379": false} {
		other, err := k.Decode(mapping(t, "{store: {redis: {url: '"+url+"'}}}"), lookup)
		if err != nil {
			t.Fatal(err)
		}
		if got := other.Config.(gatewayauth.Config).Store.Fingerprint == st.Fingerprint; got != same {
			t.Errorf("%s: same fingerprint %v, want %v (a new password must reach a reload)", url, got, same)
		}
	}
	if st.URL != "redis://:pw-not-shown@r:6379" || st.Addr != "r:6379" || st.KeyPrefix != "mcpbridge:" || st.Fingerprint == "" || strings.Contains(st.Fingerprint, "pw") {
		t.Errorf("decoded store %+v", st)
	}
}

// A CEL rule that does not compile is a positioned error of the file: the
// host never applies it, so the running policy stays.
func TestCELErrorIsPositioned(t *testing.T) {
	file := `- id: gw
  name: gateway
  config:
    policy:
      - subjects: [alice]
        allow: ["*"]
      - when: 'claims.scope.contains('
        allow: ["*"]
`
	_, err := host.NewCatalog(NewKind(nil)).Parse("gw.yaml", []byte(file), func(string) (string, bool) { return "", false })
	if err == nil || !strings.Contains(err.Error(), "gw.yaml:7:") || !strings.Contains(err.Error(), "config.policy[1].when: does not compile") {
		t.Fatalf("Parse: %v; want a positioned error at config.policy[1].when", err)
	}
}

func mapping(t *testing.T, src string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		t.Fatal(err)
	}
	return n.Content[0]
}
