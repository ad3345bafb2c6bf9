package cli

import (
	"strings"
	"testing"
)

// A number or boolean where a string goes is told to be quoted only when
// the quoted value would do (env PORT: 8080); otherwise the message says
// what the field takes, once (taskLease a duration, perIdentity a rate,
// pin a mode).
func TestNumberForAStringSaysWhatTheFieldTakes(t *testing.T) {
	cfg := writeConfig(t, `- id: gw
  name: gateway
  config:
    rateLimit: {perIdentity: 120}
    store: {redis: {url: "redis://127.0.0.1:6379"}, taskLease: 5}
- id: a
  name: mcp-client
  config:
    serverName: a
    transport: stdio
    command: x
    env: {PORT: 8080}
    pin: false
`)
	r := mcpbridge(t, "", "validate", "--config", cfg)
	for _, want := range []string{
		`config.rateLimit.perIdentity: must be a count per s, m or h, such as "120/m", got "120"`,
		`config.store.taskLease: must be a duration from 500ms to 1h0m0s, like 15s; got "5"`,
		`config.env.PORT: must be a string, got the integer 8080 (quote it: "8080")`,
		`config.pin: must be`,
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("validate: want %q in\n%s", want, r.stderr)
		}
	}
	if n := strings.Count(r.stderr, "quote it"); n != 1 || strings.Contains(r.stderr, "is required") || r.code != ExitUsage {
		t.Errorf("validate: exit %d, %d quote hints, want 1 and no \"is required\":\n%s", r.code, n, r.stderr)
	}
}

// A misspelt reconnect option gets the did-you-mean other keys get,
// after upstream's wording.
func TestReconnectOptionDidYouMean(t *testing.T) {
	cfg := writeConfig(t, `- id: a
  name: mcp-client
  config: {serverName: a, transport: stdio, command: x, reconnect: {maxAttempt: 3}}
`)
	r := mcpbridge(t, "", "validate", "--config", cfg)
	want := `config.reconnect.maxAttempt: mcp-client(a): reconnect.maxAttempt is not a reconnect option (did you mean "maxAttempts"?)`
	if r.code != ExitUsage || !strings.Contains(r.stderr, want) {
		t.Errorf("validate: want %q in %+v", want, r)
	}
}
