package host

import (
	"context"
	"testing"
)

// Two hosts apply one config from files written otherwise (comments,
// quoting, flow style, key order) with variables whose values differ
// per host: one digest. A changed value changes it; a reload whose new
// config does not start leaves the digest of the config that kept
// running, not of the file; the same config again gives the first
// digest. Replicas had nothing to compare what they apply by.
func TestDigestOfTheAppliedConfig(t *testing.T) {
	a, b := newFakeHost(t, Options{}), newFakeHost(t, Options{})
	if d := a.Digest(); d != "" {
		t.Fatalf("the digest before any apply: %q, want none", d)
	}
	apply := func(fh *fakeHost, secret, src string) string {
		t.Helper()
		plan, err := fh.opts.Catalog.Parse("f.yaml", []byte(src), func(string) (string, bool) { return secret, true })
		if err != nil {
			t.Fatal(err)
		}
		_ = fh.Apply(context.Background(), plan)
		return fh.Digest()
	}
	const written = `# replica a's file
- id: one
  name: fake
  config:
    value: v1
    secret: ${SECRET}   # differs per replica
    claim: c1
- {id: two, name: fake, disabled: true, config: {value: x}}
`
	const rewritten = `- id: one
  name: "fake"
  config: {claim: 'c1', secret: "${SECRET}", value: v1}
- id: two
  name: fake
  disabled: true
  config:
    value: "x"
`
	first := apply(a, "one", written)
	if got := apply(b, "two", rewritten); got != first || len(first) != 64 {
		t.Fatalf("one config written otherwise: digests %q and %q, want one", first, got)
	}
	changed := apply(b, "two", `- {id: one, name: fake, config: {value: v2, secret: "${SECRET}", claim: c1}}
- {id: two, name: fake, disabled: true, config: {value: x}}
`)
	if changed == first {
		t.Fatalf("a changed value kept the digest %q", changed)
	}
	if got := apply(b, "two", `- {id: one, name: fake, config: {value: v3, startErr: "refused", claim: c1}}
- {id: two, name: fake, disabled: true, config: {value: x}}
`); got != changed {
		t.Errorf("a reload whose config did not start: digest %q, want that of the config that kept running, %q", got, changed)
	}
	if got := apply(b, "two", rewritten); got != first {
		t.Errorf("the first config again: digest %q, want %q", got, first)
	}
}
