package gatewayauth

import (
	"encoding/json"
	"slices"
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

// argKeys finds the names unmarshalling into a map would, for any input.
func FuzzArgKeys(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":{"x":[1,{"y":2}]},"c":"{\"d\":1}"}`, `{}`, `[1]`, `"s"`, ` {"a\"b":1, "a\"b":2}`, `{"\u00e9":1,"\ud800":2}`, "{\"\xff\":1}", `{"a":1`, `null`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want []string
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(s), &m) == nil && m != nil {
			want = []string{}
			for k := range m {
				want = append(want, k)
			}
			slices.Sort(want)
		}
		if d := cmp.Diff(want, argKeys(json.RawMessage(s))); d != "" {
			t.Errorf("argKeys(%q) (-map +got):\n%s", s, d)
		}
	})
}

// The audit's trace id is a W3C traceparent's, and nothing else.
func TestTraceID(t *testing.T) {
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	for tp, want := range map[any]string{
		"00-" + id + "-00f067aa0ba902b7-01":     id,
		"00-" + id + "-00f067aa0ba902b7":        "",
		"00-" + id + "-00f067aa0ba902b7-01-xx":  "",
		"00-" + id[1:] + "-00f067aa0ba902b7-01": "",
		"":                                      "",
		42:                                      "",
	} {
		if got := traceID(map[string]any{"traceparent": tp}); got != want {
			t.Errorf("traceID(%v) = %q, want %q", tp, got, want)
		}
	}
	if got := traceID(nil); got != "" {
		t.Errorf("traceID(nil) = %q", got)
	}
}
