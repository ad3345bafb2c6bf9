package host

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const oneAB = `
- {id: a, name: fake, config: {value: "1", claim: A}}
- {id: b, name: fake, config: {value: "1", claim: B}}
- {id: c, name: fake, disabled: true, config: {value: "1"}}
`

// Restart starts one entry again make-before-break (its new instance
// starts before the old one closes) and leaves the others alone.
func TestRestartOneEntry(t *testing.T) {
	fh := newFakeHost(t, Options{})
	if err := fh.apply(t, oneAB); err != nil {
		t.Fatal(err)
	}
	fh.kind.takeEvents()
	if err := fh.Restart(t.Context(), "a"); err != nil {
		t.Fatalf("Restart(a) = %v", err)
	}
	if diff := cmp.Diff([]string{"start a/1", "close a/1"}, fh.kind.takeEvents()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if !fh.log.HasRecord(slog.LevelInfo, "restart asked for, starting it again (the running instance serves until the new one is ready)", "entry", "a") ||
		!fh.log.HasRecord(slog.LevelInfo, "applied", "config", "f.yaml", "restart", "a") {
		t.Errorf("the log does not say a restarted; log:\n%s", fh.log.Text())
	}
	if diff := cmp.Diff(map[string]int{"a/1": 1, "b/1": 1}, fh.kind.running()); diff != "" {
		t.Errorf("running (-want +got):\n%s", diff)
	}
	// The restart leaves no trace: the same config again changes nothing.
	if err := fh.apply(t, oneAB); err != nil {
		t.Fatal(err)
	}
	if ev := fh.kind.takeEvents(); len(ev) != 0 {
		t.Errorf("applying the same config after a restart: %v, want nothing", ev)
	}
	for _, tc := range []struct{ id, want string }{
		{"nope", `no entry has id "nope"`},
		{"c", `entry "c" is disabled`},
	} {
		if err := fh.Restart(t.Context(), tc.id); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Restart(%s) = %v, want %q", tc.id, err, tc.want)
		}
	}
}

// A closed host restarts nothing.
func TestRestartAfterClose(t *testing.T) {
	fh := newFakeHost(t, Options{})
	if err := fh.apply(t, oneAB); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	if err := fh.Restart(context.Background(), "a"); err != ErrClosed {
		t.Errorf("Restart after Close = %v, want ErrClosed", err)
	}
}

// ApplyEntry takes one entry's new config from a plan and leaves every
// other entry as it runs, whatever the plan says of it.
func TestApplyEntryAlone(t *testing.T) {
	fh := newFakeHost(t, Options{})
	if err := fh.apply(t, oneAB); err != nil {
		t.Fatal(err)
	}
	fh.kind.takeEvents()
	next := fh.plan(t, `
- {id: a, name: fake, config: {value: "2", claim: A}}
- {id: b, name: fake, config: {value: "2", claim: B}}
`)
	if err := fh.ApplyEntry(t.Context(), next, "a"); err != nil {
		t.Fatalf("ApplyEntry(a) = %v", err)
	}
	if diff := cmp.Diff(map[string]int{"a/2": 1, "b/1": 1}, fh.kind.running()); diff != "" {
		t.Errorf("running (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"a": "ready", "b": "ready", "c": "disabled"}, fh.states()); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	if err := fh.ApplyEntry(t.Context(), next, "c"); err == nil || !strings.Contains(err.Error(), `entry "c" is not in f.yaml any more`) {
		t.Errorf("ApplyEntry(c) = %v, want it is not in the file", err)
	}
}
