package gatewayauth

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

// The console's grants are the gateway entry's console block: allow and
// tryIt and manage apart, by subject, group or scope, and nothing granted without
// it; a gateway with no identities leaves sign-in to the console token.
func TestConsoleViewer(t *testing.T) {
	env := map[string]string{"A": "tok-a", "B": "tok-b", "C": "tok-c"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	keeper := func(t *testing.T, config string) *Keeper {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(config), &n); err != nil {
			t.Fatal(err)
		}
		cfg, err := Decode(n.Content[0], lookup)
		if err != nil {
			t.Fatal(err)
		}
		k := NewKeeper(Options{})
		if err := k.Apply(t.Context(), cfg, nil); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { k.Clear(k.Current()) })
		return k
	}
	k := keeper(t, `{auth: {tokens: {alice: A, bob: B, carol: C}}, console: {allow: {subjects: [alice, bob]}, tryIt: {subjects: [alice]}, manage: {subjects: [bob]}}}`)
	for token, want := range map[string]Viewer{
		"tok-a": {Name: "alice", View: true, Try: true},
		"tok-b": {Name: "bob", View: true, Manage: true},
		"tok-c": {Name: "carol"},
	} {
		got, err := k.ConsoleViewer(t.Context(), token)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("token %s (-want +got):\n%s", token, d)
		}
	}
	if _, err := k.ConsoleViewer(t.Context(), "forged"); err == nil {
		t.Error("a forged token signed in")
	}
	none := keeper(t, `{auth: {tokens: {alice: A}}}`)
	if v, err := none.ConsoleViewer(t.Context(), "tok-a"); err != nil || v.View || v.Try || v.Manage {
		t.Errorf("without a console block alice got %+v, %v; want no grant", v, err)
	}
	pending := NewKeeper(Options{})
	pending.Require()
	if _, err := pending.ConsoleViewer(t.Context(), "anything"); !errors.Is(err, ErrNotInForce) {
		t.Errorf("before the gateway entry is applied: %v, want ErrNotInForce (not the console token's turn)", err)
	}
	open := keeper(t, `{audit: {file: "-"}}`)
	if _, err := open.ConsoleViewer(t.Context(), "tok-a"); !errors.Is(err, ErrNoIdentities) {
		t.Errorf("without identities: %v, want ErrNoIdentities", err)
	}
	if f := open.AuditFile(); f != "" {
		t.Errorf("a trail on stdout is the file %q, want none", f)
	}
}
