package host

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// isolated parses src like a reload does: an invalid entry fails alone.
func (fh *fakeHost) isolated(t *testing.T, src string) *Plan {
	t.Helper()
	p, err := fh.opts.Catalog.ParseIsolated("f.yaml", []byte(src), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("ParseIsolated:\n%v", err)
	}
	return p
}

// An entry whose config is invalid (a bad value, an unset variable, an
// unknown key, an unknown plugin, a duplicate claim) fails alone with its
// positioned problems; the other entries run.
func TestInvalidEntryFailsAlone(t *testing.T) {
	fh := newFakeHost(t, Options{})
	src := `
- {id: ok, name: fake, config: {value: "1", claim: S}}
- {id: bad, name: fake, config: {value: bad}}
- {id: unset, name: fake, config: {secret: "${NOPE}"}}
- {id: key, name: fake, config: {value: "1"}, colour: red}
- {id: kind, name: nope}
- {id: dup, name: fake, config: {value: "2", claim: S}}
`
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := fh.Apply(ctx, fh.isolated(t, src))
	if err == nil || !strings.Contains(err.Error(), `entry "bad": failed to start: f.yaml:3:3: entry "bad": value: bad is not allowed`) {
		t.Errorf("Apply = %v", err)
	}
	want := map[string]string{
		"ok":    "ready",
		"bad":   `failed: f.yaml:3:3: entry "bad": value: bad is not allowed`,
		"unset": `failed: f.yaml:4:3: entry "unset": secret: variable is not set`,
		"key":   `failed: f.yaml:5:47: entry "key": colour: unknown key "colour"`,
		"kind":  `failed: f.yaml:6:20: entry "kind": name: unknown plugin "nope" (known: fake)`,
		"dup":   `failed: f.yaml:7:53: entry "dup": config.claim: claim "S" is already used by entry "ok" (line 2); pick a unique claim for each entry`,
	}
	if diff := cmp.Diff(want, fh.states()); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"start ok/1"}, fh.kind.takeEvents()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	// Parse, which validate uses, still refuses the file with every problem.
	_, err = fh.opts.Catalog.Parse("f.yaml", []byte(src), func(string) (string, bool) { return "", false })
	if n := strings.Count(err.Error(), "\n") + 1; n != 5 {
		t.Errorf("Parse found %d problems, want 5:\n%v", n, err)
	}
}

// A reload that breaks a running entry keeps its instance running its
// previous config (make before break) and reports the problem; once fixed,
// the entry changes as usual. An entry that never ran shows failed.
func TestInvalidEntryKeepsRunningInstance(t *testing.T) {
	fh := newFakeHost(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := fh.Apply(ctx, fh.isolated(t, `- {id: a, name: fake, config: {value: "1"}}`)); err != nil {
		t.Fatal(err)
	}
	fh.kind.takeEvents()
	err := fh.Apply(ctx, fh.isolated(t, "- {id: a, name: fake, config: {value: bad}}\n- {id: b, name: fake, config: {value: \"1\"}}\n"))
	want := `entry "a": the new config did not start, the previous config keeps running: f.yaml:1:3: entry "a": value: bad is not allowed`
	if err == nil || err.Error() != want {
		t.Errorf("Apply = %v\nwant %s", err, want)
	}
	if diff := cmp.Diff(map[string]string{"a": "ready", "b": "ready"}, fh.states()); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"start b/1"}, fh.kind.takeEvents()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"a/1": 1, "b/1": 1}, fh.kind.running()); diff != "" {
		t.Errorf("running (-want +got):\n%s", diff)
	}
	if err := fh.Apply(ctx, fh.isolated(t, "- {id: a, name: fake, config: {value: \"2\"}}\n- {id: b, name: fake, config: {value: \"1\"}}\n")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"start a/2", "close a/1"}, fh.kind.takeEvents()); diff != "" {
		t.Errorf("events after the fix (-want +got):\n%s", diff)
	}
}

// A file that is not a usable list of entries is still refused whole.
func TestParseIsolatedRefusesBrokenFile(t *testing.T) {
	cat := NewCatalog(newFakeKind(t, "fake"))
	for _, src := range []string{
		"- {id: a, name: [fake\n",
		"{a: 1}\n",
		"- {name: fake}\n- {id: b, name: fake}\n",
		"- {id: a, name: fake}\n- {id: a, name: fake}\n",
	} {
		if _, err := cat.ParseIsolated("f.yaml", []byte(src), nil); err == nil {
			t.Errorf("ParseIsolated(%q) succeeded", src)
		}
	}
}
