package host

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/confpos"
)

func TestNewCatalogPanics(t *testing.T) {
	k := newFakeKind(t, "fake")
	tests := []struct {
		name  string
		kinds []Kind
		want  string
	}{
		{"nil", []Kind{k, nil}, "host.NewCatalog: kind #2 is nil"},
		{"empty name", []Kind{newFakeKind(t, "")}, "host.NewCatalog: kind #1 (*host.fakeKind) has an empty name"},
		{"twice", []Kind{k, k}, `host.NewCatalog: two kinds are named "fake"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if got := recover(); got != tt.want {
					t.Errorf("panic %v, want %q", got, tt.want)
				}
			}()
			NewCatalog(tt.kinds...)
		})
	}
	c := NewCatalog(newFakeKind(t, "zeta"), k)
	if diff := cmp.Diff([]string{"fake", "zeta"}, c.Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	if got, ok := c.Kind("fake"); !ok || got != Kind(k) {
		t.Errorf("Kind(fake) = %v, %v", got, ok)
	}
	if _, ok := c.Kind("nope"); ok {
		t.Errorf("Kind(nope) found")
	}
}

func TestParse(t *testing.T) {
	c := NewCatalog(newFakeKind(t, "fake"), newFakeKind(t, "other"))
	lookup := func(k string) (string, bool) {
		if k == "SECRET" {
			return "hunter2", true
		}
		return "", false
	}
	plan, err := c.Parse("f.yaml", []byte(`
- {id: a, name: fake, config: {value: "1", claim: S, secret: "${SECRET}"}}
- {id: b, name: other, config: {value: "1", claim: S}}
- {id: off, name: no-such-kind, disabled: true, config: {anything: [goes]}}
- {id: d, name: fake, config: {timeoutMs: 5}}
`), lookup)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, pe := range plan.Entries {
		ids = append(ids, pe.Entry.ID)
	}
	if diff := cmp.Diff([]string{"a", "b", "off", "d"}, ids); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	if len(plan.Enabled()) != 3 || plan.Source != "f.yaml" {
		t.Errorf("Enabled = %d entries, Source %q", len(plan.Enabled()), plan.Source)
	}
	if got := plan.Entries[0].Spec.Config.(fakeConfig).Secret; got != "hunter2" {
		t.Errorf("the secret was not expanded: %q", got)
	}
	if plan.Entries[2].Spec.Config != nil {
		t.Errorf("a disabled entry was decoded")
	}
}

func TestParseErrors(t *testing.T) {
	c := NewCatalog(newFakeKind(t, "fake"))
	src := `- {id: a, name: fake, config: {value: "1", claim: S, secret: "${SECRET}"}}
- id: b
  name: fake
  config:
    claim: S
- {id: c, name: nope}
- {id: d, name: fake, config: {value: bad, secret: "${SECRET}"}}
- id: e
  name: fake
  config: {value: [1]}
- {id: f, name: fake, config: {secret: "${UNSET}"}}
`
	_, err := c.Parse("f.yaml", []byte(src), func(k string) (string, bool) { return "hunter2", k == "SECRET" })
	var es confpos.Errors
	if err == nil {
		t.Fatal("Parse accepted a bad file")
	}
	es, _ = err.(confpos.Errors)
	want := []string{
		`f.yaml:5:12: entry "b": config.claim: claim "S" is already used by entry "a" (line 1); pick a unique claim for each entry`,
		`f.yaml:6:17: entry "c": name: unknown plugin "nope" (known: fake)`,
		`f.yaml:7:3: entry "d": value: bad is not allowed`,
		`f.yaml:8:3: entry "e": yaml: unmarshal errors:`,
		`f.yaml:11:3: entry "f": secret: variable is not set`,
	}
	var got []string
	for _, e := range es {
		got = append(got, strings.SplitN(e.Error(), "\n", 2)[0])
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("an expanded secret is in the errors:\n%v", err)
	}
	if _, err := c.Parse("f.yaml", []byte("- {id: a}"), nil); err == nil || !strings.Contains(err.Error(), "name: is required") {
		t.Errorf("Parse of an entry without name = %v", err)
	}
}
