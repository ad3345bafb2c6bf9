package gatewayauth

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/audit"
)

// Each args mode puts what it says in the audit line: names only, an HMAC
// that is equal for equal arguments and differs otherwise, the values, or
// nothing.
func TestAuditArgsModes(t *testing.T) {
	k := NewKeeper(Options{})
	raw := json.RawMessage(`{"b":"secret","a":1}`)
	entry := func(mode string, raw json.RawMessage) audit.Entry {
		var e audit.Entry
		k.args(&e, mode, raw)
		return e
	}
	if d := cmp.Diff(audit.Entry{ArgKeys: []string{"a", "b"}}, entry("keys", raw)); d != "" {
		t.Errorf("keys (-want +got):\n%s", d)
	}
	if got := entry("full", raw); string(got.Args) != string(raw) {
		t.Errorf("full: %s", got.Args)
	}
	if d := cmp.Diff(audit.Entry{}, entry("none", raw)); d != "" {
		t.Errorf("none (-want +got):\n%s", d)
	}
	h1, h2, h3 := entry("hash", raw).ArgsHash, entry("hash", raw).ArgsHash, entry("hash", json.RawMessage(`{"b":"other","a":1}`)).ArgsHash
	if len(h1) != 64 || h1 != h2 || h1 == h3 {
		t.Errorf("hash: %q %q %q; want 64 hex digits, equal for equal arguments only", h1, h2, h3)
	}
	if h := NewKeeper(Options{}); func() string { var e audit.Entry; h.args(&e, "hash", raw); return e.ArgsHash }() == h1 {
		t.Error("hash: two processes' salts gave the same hash")
	}
}
