package cli

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stdioCall is a client's whole stdio session: initialize, then a call of
// the fixture's greet, which the gateway entries below deny to everyone.
const stdioCall = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp__fx__greet","arguments":{"name":"intruder"}}}
`

// A gateway entry that guards every call fails closed: one that is
// invalid (a misspelt key) stops serve before anything starts, naming the
// entry and the key; one that is valid but cannot be applied (its audit
// file cannot be opened) stops serve after its first apply. Neither
// answers the call its policy would deny.
func TestServeBrokenGatewayEntryAnswersNoCall(t *testing.T) {
	denyAll := "    policy: [{subjects: [nobody], allow: [none]}]\n"
	cases := []struct {
		name, entry string
		args        []string
		want        []string
		kind        string // the entry's name: gateway when empty
	}{
		{"misspelt key, stdio", "    audti: {file: -}\n" + denyAll, []string{"--stdio"},
			[]string{`entry "gw"`, "config.audti: unknown key", "serve does not start"}, ""},
		{"misspelt key, http", "    audti: {file: -}\n" + denyAll, []string{"--http", "127.0.0.1:0"},
			[]string{`entry "gw"`, "config.audti: unknown key", "serve does not start"}, ""},
		{"audit file cannot be opened", "    audit: {file: " + filepath.Join(t.TempDir(), "missing", "dir", "audit.jsonl") + "}\n" + denyAll,
			[]string{"--http", "127.0.0.1:0"}, []string{`gateway entry "gw" could not be applied`, "gateway audit"}, ""},
		// stdout is the protocol's over --stdio: a trail there would put
		// lines that are no JSON-RPC in the client's stream (it used to)
		{"audit on stdout, stdio", "    audit: {file: \"-\"}\n" + denyAll, []string{"--stdio"},
			[]string{`entry "gw": config.audit.file: "-" writes the trail on stdout, which serve --stdio speaks MCP on`, "serve does not start"}, ""},
		// A misspelt kind fails as an unknown one; taken for any entry
		// that fails alone, serve ran with every call unguarded.
		{"misspelt kind, http", denyAll, []string{"--http", "127.0.0.1:0"},
			[]string{`entry "gw"`, `unknown plugin "gatway"`, "serve does not start"}, "gatway"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kind := cmp.Or(c.kind, "gateway")
			cfg := writeConfig(t, fixtureEntries(t, "fx")+"- id: gw\n  name: "+kind+"\n  config:\n"+c.entry)
			r := mcpbridge(t, stdioCall, append(append([]string{"serve"}, c.args...), "--config", cfg)...)
			if r.code == 0 {
				t.Errorf("serve exited 0; want it refused")
			}
			if strings.Contains(r.stdout, "intruder") {
				t.Errorf("the denied call was answered:\n%s", r.stdout)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
		})
	}
}

// serve refuses a network address without a token before it starts any
// server: nothing is spawned for a run that will not serve.
func TestServeRefusedAddressStartsNoServer(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "started")
	cfg := writeConfig(t, `- id: s
  name: mcp-client
  config: {serverName: s, transport: stdio, command: sh, args: ["-c", "touch `+marker+`; sleep 5"]}
`)
	r := mcpbridge(t, "", "serve", "--http", "0.0.0.0:0", "--config", cfg)
	if r.code != 2 || !strings.Contains(r.stderr, "is not a loopback address") {
		t.Fatalf("serve on 0.0.0.0 without a token: %d %q; want 2 and the refusal", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "starting") {
		t.Errorf("serve started servers before refusing:\n%s", r.stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the server was spawned before serve refused its address")
	}
}

// A gateway entry with disabled: true in the config serve starts with
// stops serve, saying the entry is disabled and how to go on, over stdio
// and HTTP: the entry guards every call, and serve ran with every call
// unguarded and ready (a reload that disables it refuses every call).
func TestServeDisabledGatewayEntryDoesNotStart(t *testing.T) {
	t.Parallel()
	entry := "- id: gw\n  name: gateway\n  disabled: true\n  config: {policy: [{deny: [\"*\"]}]}\n"
	for _, args := range [][]string{{"--stdio"}, {"--http", "127.0.0.1:0"}} {
		t.Run(args[0], func(t *testing.T) {
			t.Parallel()
			fx := fixtureEntries(t, "fx")
			cfg := writeConfig(t, fx+entry)
			r := mcpbridge(t, stdioCall, append(append([]string{"serve"}, args...), "--config", cfg)...)
			if r.code != ExitUsage {
				t.Errorf("serve exited %d; want %d, a config error", r.code, ExitUsage)
			}
			if strings.Contains(r.stdout, "intruder") {
				t.Errorf("the call was answered with the gateway entry disabled:\n%s", r.stdout)
			}
			line := strings.Count(fx, "\n") + 1
			for _, w := range []string{
				fmt.Sprintf(`%s:%d: entry "gw" is disabled`, cfg, line),
				"serve does not run without its guards while the entry is in the config",
				"enable it", "remove the entry to serve without identity, policy or audit",
			} {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			if strings.Contains(r.stderr, "starting") {
				t.Errorf("serve started servers before refusing:\n%s", r.stderr)
			}
		})
	}
}
