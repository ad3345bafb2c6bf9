package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// step is one plan applied in a reconcile scenario, and what must follow.
type step struct {
	src     string
	events  []string          // closes (sorted) then starts, in order
	states  map[string]string // id → state of every entry afterwards
	running map[string]int    // "<id>/<value>" → live instances
	errHas  []string          // "" entries: Apply must succeed
	logHas  []logRec          // each: some record matches
}

// logRec is a log record a test expects (see mcptest.Record.Match).
type logRec struct {
	level slog.Level
	msg   string
	attrs []any
}

func logInfo(msg string, attrs ...any) logRec  { return logRec{slog.LevelInfo, msg, attrs} }
func logError(msg string, attrs ...any) logRec { return logRec{slog.LevelError, msg, attrs} }

// logApplied is the record of an Apply of f.yaml that made exactly
// changes: kind of change, then the ids, comma-separated.
func logApplied(changes ...any) logRec {
	attrs := append([]any{"config", "f.yaml"}, changes...)
	for _, kind := range []string{"added", "enabled", "changed", "restarted", "disabled", "removed"} {
		if !slices.Contains(changes, any(kind)) {
			attrs = append(attrs, kind, mcptest.Absent)
		}
	}
	return logInfo("applied", attrs...)
}

// logUnchanged is the record of an Apply of f.yaml that changed nothing.
var logUnchanged = logRec{slog.LevelDebug, "no entry changed", []any{"config", "f.yaml"}}

func (l logRec) String() string { return fmt.Sprintf("%s %q %v", l.level, l.msg, l.attrs) }

func TestReconcile(t *testing.T) {
	const ab = `
- {id: a, name: fake, config: {value: "1", claim: A}}
- {id: b, name: fake, config: {value: "1", claim: B}}
- {id: c, name: fake, disabled: true, config: {value: "1"}}
`
	tests := []struct {
		name  string
		steps []step
	}{{
		name: "add, unchanged, reformat, change, remove, disable, enable",
		steps: []step{
			{src: ab,
				events:  []string{"start a/1", "start b/1"},
				states:  map[string]string{"a": "ready", "b": "ready", "c": "disabled"},
				running: map[string]int{"a/1": 1, "b/1": 1},
				logHas:  []logRec{logInfo("added, starting", "entry", "a"), logInfo("fake started", "entry", "a"), logApplied("added", "a,b")}},
			{src: "# a comment\n" + strings.ReplaceAll(ab, `"1"`, `'1'`),
				states:  map[string]string{"a": "ready", "b": "ready", "c": "disabled"},
				running: map[string]int{"a/1": 1, "b/1": 1},
				logHas:  []logRec{logUnchanged}},
			// Make before break: the new instance starts, then the old
			// one stops.
			{src: strings.Replace(ab, `value: "1", claim: A`, `value: "2", claim: A`, 1),
				events:  []string{"start a/2", "close a/1"},
				states:  map[string]string{"a": "ready", "b": "ready", "c": "disabled"},
				running: map[string]int{"a/2": 1, "b/1": 1},
				logHas: []logRec{
					logInfo("config changed, starting it (the previous config serves until it is ready)", "entry", "a"),
					logInfo("the new config is ready and serves; stopping the previous one", "entry", "a"),
					logApplied("changed", "a"),
				}},
			{src: `- {id: a, name: fake, config: {value: "2", claim: A}}`,
				events:  []string{"close b/1"},
				states:  map[string]string{"a": "ready"},
				running: map[string]int{"a/2": 1},
				logHas:  []logRec{logInfo("removed, stopping", "entry", "b"), logInfo("removed, stopping", "entry", "c")}},
			{src: `- {id: a, name: fake, disabled: true, config: {value: "2", claim: A}}`,
				events:  []string{"close a/2"},
				states:  map[string]string{"a": "disabled"},
				running: map[string]int{},
				logHas:  []logRec{logInfo("disabled, stopping", "entry", "a")}},
			{src: `- {id: a, name: fake, config: {value: "2", claim: A}}`,
				events:  []string{"start a/2"},
				states:  map[string]string{"a": "ready"},
				running: map[string]int{"a/2": 1},
				logHas:  []logRec{logInfo("enabled, starting", "entry", "a")}},
		},
	}, {
		// The removed entry is the added one's predecessor: they share
		// the claim until the new one is ready (upstream's create-first
		// order fails this with the duplicate-serverName error).
		name: "rename an id, keeping its claim",
		steps: []step{
			{src: `- {id: old, name: fake, config: {value: "1", claim: S}}`,
				events: []string{"start old/1"}, states: map[string]string{"old": "ready"}},
			{src: `- {id: new, name: fake, config: {value: "1", claim: S}}`,
				events:  []string{"start new/1", "close old/1"},
				states:  map[string]string{"new": "ready"},
				running: map[string]int{"new/1": 1},
				logHas: []logRec{
					logInfo("removed, serving until its successor takes over", "entry", "old", "successor", "new"),
					logInfo("added, taking over from another entry (which serves until this one is ready)", "entry", "new", "from", "old"),
					logInfo("ready and serving; stopping the entry it took over from", "entry", "new", "from", "old"),
					logApplied("added", "new", "removed", "old"),
				}},
		},
	}, {
		// A renamed entry whose new config fails: the removed entry keeps
		// running (and is listed) until a plan applies without it.
		name: "rename an id to a config that fails",
		steps: []step{
			{src: `- {id: old, name: fake, config: {value: "1", claim: S}}`,
				events: []string{"start old/1"}},
			{src: `- {id: new, name: fake, config: {value: "2", claim: S, fail: boom}}`,
				events:  []string{"start new/2", "close new/2"},
				states:  map[string]string{"new": "failed: boom", "old": "ready"},
				running: map[string]int{"old/1": 1},
				errHas:  []string{`entry "new": the new config did not start, entry "old" keeps running its previous config: boom`}},
			{src: `- {id: new, name: fake, config: {value: "3", claim: S}}`,
				events:  []string{"start new/3", "close old/1"},
				states:  map[string]string{"new": "ready"},
				running: map[string]int{"new/3": 1}},
		},
	}, {
		// Each old instance serves until its successor is ready, so two
		// entries cannot trade claims in one reload: both are refused and
		// keep their previous configs. In two reloads it works (the second
		// is a chain: b moves first, then a takes b's old claim).
		name: "swap claims between two changed entries",
		steps: []step{
			{src: "- {id: a, name: fake, config: {value: '1', claim: X}}\n- {id: b, name: fake, config: {value: '1', claim: Y}}",
				events: []string{"start a/1", "start b/1"}},
			{src: "- {id: a, name: fake, config: {value: '2', claim: Y}}\n- {id: b, name: fake, config: {value: '2', claim: X}}",
				states:  map[string]string{"a": "ready", "b": "ready"},
				running: map[string]int{"a/1": 1, "b/1": 1},
				errHas: []string{
					`entry "a": the new config did not start, the previous config keeps running: claim "Y" is held by entry "b", whose new config needs a name this entry holds: each old instance serves until its successor is ready, so names cannot be swapped in one reload — swap them in two (first move one entry to an unused name)`,
					`entry "b": the new config did not start, the previous config keeps running: claim "X" is held by entry "a", whose new config needs a name this entry holds`,
				},
				logHas: []logRec{logUnchanged}},
			{src: "- {id: a, name: fake, config: {value: '2', claim: T}}\n- {id: b, name: fake, config: {value: '1', claim: Y}}",
				events: []string{"start a/2", "close a/1"}},
			{src: "- {id: a, name: fake, config: {value: '3', claim: Y}}\n- {id: b, name: fake, config: {value: '2', claim: X}}",
				events:  []string{"start b/2", "close b/1", "start a/3", "close a/2"},
				states:  map[string]string{"a": "ready", "b": "ready"},
				running: map[string]int{"a/3": 1, "b/2": 1}},
		},
	}, {
		// The old instance never stops: the failed new one is closed.
		name: "a changed entry that fails keeps its previous config running",
		steps: []step{
			{src: `- {id: a, name: fake, config: {value: "1"}}`, events: []string{"start a/1"}},
			{src: `- {id: a, name: fake, config: {value: "2", fail: "boom"}}`,
				events:  []string{"start a/2", "close a/2"},
				states:  map[string]string{"a": "ready"},
				running: map[string]int{"a/1": 1},
				errHas:  []string{`entry "a": the new config did not start, the previous config keeps running: boom`},
				logHas: []logRec{
					logError("the new config did not start, the previous config keeps running", "entry", "a", "err", "boom", "kept", mcptest.Absent),
				}},
			// The same failing file again is retried (it still differs
			// from what runs), and fails again.
			{src: `- {id: a, name: fake, config: {value: "2", fail: "boom"}}`,
				events:  []string{"start a/2", "close a/2"},
				running: map[string]int{"a/1": 1},
				errHas:  []string{"boom"}},
			// A refused start leaves it the same way.
			{src: `- {id: a, name: fake, config: {value: "3", startErr: "no way"}}`,
				events:  []string{"refuse a/3"},
				states:  map[string]string{"a": "ready"},
				running: map[string]int{"a/1": 1},
				errHas:  []string{`entry "a": the new config did not start, the previous config keeps running: starting: no way`}},
			// A first attempt that fails but keeps retrying (not strict)
			// has not started: it is closed too.
			{src: `- {id: a, name: fake, config: {value: "4", down: "connection refused"}}`,
				events:  []string{"start a/4", "close a/4"},
				states:  map[string]string{"a": "ready"},
				running: map[string]int{"a/1": 1},
				errHas:  []string{`entry "a": the new config did not start, the previous config keeps running: connection refused`}},
			// So is one that does not settle within its startup timeout.
			{src: `- {id: a, name: fake, config: {value: "5", hold: true, timeoutMs: 20}}`,
				events:  []string{"start a/5", "close a/5"},
				states:  map[string]string{"a": "ready"},
				running: map[string]int{"a/1": 1},
				errHas:  []string{`entry "a": the new config did not start, the previous config keeps running: no answer within the startup timeout (20ms)`}},
		},
	}, {
		// A reload is how a user retries an entry that failed (after fixing
		// its cause outside the file): it is restarted even when unchanged.
		name: "a failed entry is retried by every reload",
		steps: []step{
			{src: `- {id: a, name: fake, config: {value: "1", claim: S, fail: "later"}}`,
				events:  []string{"start a/1", "close a/1"},
				states:  map[string]string{"a": "failed: later"},
				running: map[string]int{},
				errHas:  []string{`entry "a": failed to start: later`},
				logHas: []logRec{logError("failed to start", "entry", "a", "err", "later", "kept", mcptest.Absent),
					logApplied("failed", "a")}},
			{src: `- {id: a, name: fake, config: {value: "1", claim: S, fail: "later"}}` + "\n# edited elsewhere",
				events: []string{"start a/1", "close a/1"},
				states: map[string]string{"a": "failed: later"},
				errHas: []string{`entry "a": failed to start: later`},
				logHas: []logRec{logInfo("failed earlier, restarting", "entry", "a")}},
			{src: `- {id: a, name: fake, config: {value: "2", claim: S}}`,
				events: []string{"start a/2"},
				states: map[string]string{"a": "ready"}},
		},
	}, {
		// b needs the claim a gives up: it starts once a's new instance
		// has taken over and the old one has closed.
		name: "a claim moves to another entry",
		steps: []step{
			{src: `- {id: a, name: fake, config: {value: "1", claim: S}}`, events: []string{"start a/1"}},
			{src: "- {id: a, name: fake, config: {value: '2', claim: T}}\n- {id: b, name: fake, config: {value: '1', claim: S}}",
				events:  []string{"start a/2", "close a/1", "start b/1"},
				states:  map[string]string{"a": "ready", "b": "ready"},
				running: map[string]int{"a/2": 1, "b/1": 1}},
		},
	}, {
		// A claim of a renamed entry's predecessor that the renamed entry
		// does not take: c waits for it, and cannot start when the rename
		// fails (the removed entry keeps running).
		name: "a claim held by a removed entry whose successor fails",
		steps: []step{
			{src: `- {id: a, name: fake, config: {value: "1", claim: S, also: T}}`, events: []string{"start a/1"}},
			{src: "- {id: b, name: fake, config: {value: '1', claim: S, fail: boom, closeErr: stuck}}\n- {id: c, name: fake, config: {value: '1', also: T}}",
				events: []string{"start b/1", "close b/1"},
				states: map[string]string{
					"a": "ready",
					"b": "failed: boom",
					"c": `failed: also "T" is still held by entry "a", which keeps running because entry "b" did not start in its place`,
				},
				running: map[string]int{"a/1": 1},
				errHas: []string{
					`entry "b": the new config did not start, entry "a" keeps running its previous config: boom`,
					`entry "c": failed to start: also "T" is still held by entry "a"`,
				},
				logHas: []logRec{logError("closing failed", "entry", "b", "err", "stuck")}},
		},
	}, {
		// If a's new config fails, a keeps its claim, so b cannot start.
		name: "a claim that does not move",
		steps: []step{
			{src: `- {id: a, name: fake, config: {value: "1", claim: S}}`, events: []string{"start a/1"}},
			{src: "- {id: a, name: fake, config: {value: '2', claim: T, fail: boom}}\n- {id: b, name: fake, config: {value: '1', claim: S}}",
				events: []string{"start a/2", "close a/2"},
				states: map[string]string{
					"a": "ready",
					"b": `failed: claim "S" is still held by entry "a", whose new config did not start, so its previous config keeps running`,
				},
				running: map[string]int{"a/1": 1},
				errHas: []string{
					`entry "a": the new config did not start, the previous config keeps running: boom`,
					`entry "b": failed to start: claim "S" is still held by entry "a"`,
				}},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fh := newFakeHost(t, Options{})
			for i, s := range tt.steps {
				err := fh.apply(t, s.src)
				if len(s.errHas) == 0 && err != nil {
					t.Fatalf("step %d: Apply: %v", i, err)
				}
				for _, want := range s.errHas {
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Errorf("step %d: Apply error %v, want it to contain %q", i, err, want)
					}
				}
				if diff := cmp.Diff(s.events, sortedCloses(fh.kind.takeEvents())); diff != "" {
					t.Errorf("step %d: events (-want +got):\n%s", i, diff)
				}
				if s.states != nil {
					if diff := cmp.Diff(s.states, fh.states()); diff != "" {
						t.Errorf("step %d: states (-want +got):\n%s", i, diff)
					}
				}
				if s.running != nil {
					if diff := cmp.Diff(s.running, fh.kind.running()); diff != "" {
						t.Errorf("step %d: running (-want +got):\n%s", i, diff)
					}
				}
				for _, want := range s.logHas {
					if !fh.log.HasRecord(want.level, want.msg, want.attrs...) {
						t.Errorf("step %d: no log record %s; log:\n%s", i, want, fh.log.Text())
					}
				}
			}
		})
	}
}

// The run-time reservation: a claim still held by an instance that is
// closing (past ShutdownTimeout) refuses a new instance with upstream's
// message; once it has closed, the claim is free again.
func TestReservationConflict(t *testing.T) {
	fh := newFakeHost(t, Options{ShutdownTimeout: 20 * time.Millisecond})
	if err := fh.apply(t, `- {id: a, name: fake, config: {value: "1", claim: S, slowClose: true}}`); err != nil {
		t.Fatal(err)
	}
	err := fh.apply(t, `[]`)
	if err == nil || !strings.Contains(err.Error(), `entry "a": closing: did not close within 20ms`) {
		t.Fatalf("Apply = %v, want the close timeout", err)
	}
	if !fh.log.HasRecord(slog.LevelError, "closing failed", "entry", "a", "err", "did not close within 20ms; it goes on closing in the background") {
		t.Errorf("the slow close was not logged:\n%s", fh.log.Text())
	}
	err = fh.apply(t, `- {id: b, name: fake, config: {value: "1", claim: S}}`)
	want := `fake: claim "S" is already in use by another fake instance — pick a unique claim in f.yaml`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Apply = %v\nwant %q", err, want)
	}
	if diff := cmp.Diff(map[string]string{"b": "failed: " + want}, fh.states()); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	// Once the old instance has closed, its claim is free again.
	fh.kind.unblock()
	fh.wait()
	if err := fh.apply(t, `- {id: b, name: fake, config: {value: "2", claim: S}}`); err != nil {
		t.Fatalf("Apply after the old instance closed: %v", err)
	}
	if diff := cmp.Diff(map[string]string{"b": "ready"}, fh.states()); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
}

// Readiness waits for a held instance only until its startup timeout;
// Status then says it timed out, and a strict one is waited for longer.
func TestStartupTimeout(t *testing.T) {
	fh := newFakeHost(t, Options{ShutdownTimeout: 30 * time.Second})
	start := time.Now()
	if err := fh.apply(t, `- {id: slow, name: fake, config: {value: "1", hold: true, timeoutMs: 50}}
- {id: fast, name: fake, config: {value: "1"}}`); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("Apply waited %v for a 50ms startup timeout", time.Since(start))
	}
	got := fh.states()
	want := map[string]string{"slow": "timed-out: no answer within the startup timeout (50ms)", "fast": "ready"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}

	// A strict instance is waited for past its timeout, until it settles.
	done := make(chan error, 1)
	go func() {
		done <- fh.apply(t, `- {id: strict, name: fake, config: {value: "1", hold: true, strict: true, timeoutMs: 1, fail: "gave up"}}`)
	}()
	select {
	case err := <-done:
		t.Fatalf("Apply returned (%v) before the strict instance settled", err)
	case <-time.After(100 * time.Millisecond): // a negative check: Apply must still be waiting
	}
	fh.kind.unblock()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "gave up") {
		t.Errorf("Apply = %v, want the strict instance's failure", err)
	}
}

// Close disposes of everything in parallel, reports each error, and is
// idempotent; nothing can be applied after it.
func TestClose(t *testing.T) {
	fh := newFakeHost(t, Options{})
	if err := fh.apply(t, `- {id: a, name: fake, config: {value: "1", closeErr: "a broke"}}
- {id: b, name: fake, config: {value: "1", closeErr: "b broke"}}
- {id: c, name: fake, config: {value: "1"}}
- {id: d, name: fake, disabled: true}`); err != nil {
		t.Fatal(err)
	}
	fh.kind.takeEvents()
	err := fh.Close()
	for _, want := range []string{`entry "a": closing: a broke`, `entry "b": closing: b broke`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Close = %v, want %q", err, want)
		}
	}
	if diff := cmp.Diff([]string{"close a/1", "close b/1", "close c/1"}, sortedCloses(fh.kind.takeEvents())); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if again := fh.Close(); again == nil || again.Error() != err.Error() {
		t.Errorf("second Close = %v, want the first result", again)
	}
	if diff := cmp.Diff(map[string]string{"a": "closed", "b": "closed", "c": "closed", "d": "disabled"}, fh.states()); diff != "" {
		t.Errorf("states after Close (-want +got):\n%s", diff)
	}
	if err := fh.apply(t, `[]`); !errors.Is(err, ErrClosed) {
		t.Errorf("Apply after Close = %v, want ErrClosed", err)
	}
	if err := fh.WatchFile(context.Background(), "f.yaml"); !errors.Is(err, ErrClosed) {
		t.Errorf("WatchFile after Close = %v, want ErrClosed", err)
	}
}

// Close interrupts an Apply that waits for readiness.
func TestCloseInterruptsApply(t *testing.T) {
	fh := newFakeHost(t, Options{})
	done := make(chan error, 1)
	go func() { done <- fh.apply(t, `- {id: a, name: fake, config: {value: "1", hold: true}}`) }()
	deadline := time.Now().Add(20 * time.Second)
	for len(fh.kind.running()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the instance never started")
		}
		time.Sleep(time.Millisecond)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("interrupted Apply = %v, want context.Canceled", err)
	}
	if len(fh.kind.running()) != 0 {
		t.Errorf("still running: %v", fh.kind.running())
	}
}

// A plan built in Go is checked before anything changes.
func TestApplyChecksPlan(t *testing.T) {
	fh := newFakeHost(t, Options{})
	spec := Spec{Config: fakeConfig{Value: "1"}}
	tests := []struct {
		name string
		plan *Plan
		want string
	}{
		{"no id", &Plan{Source: "go", Entries: []PlanEntry{{Entry: Entry{Name: "fake"}, Spec: spec}}},
			"go: invalid plan: entry #1 has no id"},
		{"twice", &Plan{Source: "go", Entries: []PlanEntry{{Entry: Entry{ID: "x", Name: "fake"}, Spec: spec}, {Entry: Entry{ID: "x", Name: "fake"}, Spec: spec}}},
			`go: invalid plan: entry "x" appears twice`},
		{"unknown kind", &Plan{Source: "go", Entries: []PlanEntry{{Entry: Entry{ID: "x", Name: "nope"}}}},
			`go: invalid plan: entry "x": unknown plugin "nope" (known: fake)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := fh.Apply(context.Background(), tt.plan)
			if err == nil || err.Error() != tt.want {
				t.Errorf("Apply = %v, want %q", err, tt.want)
			}
		})
	}
	if fh.Version() != 0 || len(fh.kind.takeEvents()) != 0 {
		t.Errorf("an invalid plan changed something")
	}
	// A Go-built plan with a disabled entry of an unknown kind is fine.
	ok := &Plan{Source: "go", Entries: []PlanEntry{{Entry: Entry{ID: "x", Name: "nope", Disabled: true}}, {Entry: Entry{ID: "y", Name: "fake"}, Spec: spec}}}
	if err := fh.Apply(context.Background(), ok); err != nil {
		t.Fatal(err)
	}
	if fh.Version() != 1 || fh.Source() != "go" {
		t.Errorf("Version %d, Source %q", fh.Version(), fh.Source())
	}
	if got := fh.Status(); len(got) != 2 || got[1].Name != "fake-1" || got[1].Plugin != "fake" || got[1].Transport != "fake" || got[1].Tools != 1 {
		t.Errorf("Status = %+v", got)
	}
}

// A config that cannot be fingerprinted is restarted on every apply
// rather than wrongly kept.
func TestFingerprint(t *testing.T) {
	if a, b := fingerprint("fake", func() {}), fingerprint("fake", func() {}); a == b {
		t.Errorf("two unencodable configs share fingerprint %q", a)
	}
	if a, b := fingerprint("fake", fakeConfig{Value: "1"}), fingerprint("other", fakeConfig{Value: "1"}); a == b {
		t.Errorf("the kind is not part of the fingerprint")
	}
}

func TestNewRequiresCatalogAndRegistry(t *testing.T) {
	if _, err := New(Options{}); err == nil || !strings.Contains(err.Error(), "Catalog and Options.Registry are required") {
		t.Errorf("New(Options{}) = %v", err)
	}
}

// A predecessor that does not close within ShutdownTimeout is reported;
// its successor serves all the same.
func TestSuccessionSlowClose(t *testing.T) {
	fh := newFakeHost(t, Options{ShutdownTimeout: 20 * time.Millisecond})
	if err := fh.apply(t, `- {id: a, name: fake, config: {value: "1", claim: S, slowClose: true}}`); err != nil {
		t.Fatal(err)
	}
	err := fh.apply(t, `- {id: a, name: fake, config: {value: "2", claim: S}}`)
	if err == nil || err.Error() != `entry "a": closing: did not close within 20ms; it goes on closing in the background` {
		t.Errorf("Apply = %v, want the slow close", err)
	}
	if diff := cmp.Diff(map[string]string{"a": "ready"}, fh.states()); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	if got := callText(fh, "t-S"); got != "a/2" {
		t.Errorf("the tool answers %q", got)
	}
}

// A start that fails for good and whose Close fails too: both reported.
func TestStartFailsAndCloseFails(t *testing.T) {
	fh := newFakeHost(t, Options{})
	err := fh.apply(t, `- {id: a, name: fake, config: {value: "1", fail: boom, closeErr: stuck}}`)
	if err == nil || !strings.Contains(err.Error(), `entry "a": failed to start: boom`) {
		t.Errorf("Apply = %v", err)
	}
	if !fh.log.HasRecord(slog.LevelError, "closing failed", "entry", "a", "err", "stuck") {
		t.Errorf("the failed Close was not logged:\n%s", fh.log.Text())
	}
}

// Start failures come back as *StartError, one per entry, with the cause.
func TestStartErrorUnwrap(t *testing.T) {
	fh := newFakeHost(t, Options{})
	err := fh.apply(t, `- {id: a, name: fake, config: {value: "1", startErr: "nope"}}
- {id: b, name: fake, config: {value: "1", fail: "later"}}`)
	var se *StartError
	if !errors.As(err, &se) || se.ID != "a" || se.Kept != "" || se.Unwrap() == nil || se.Unwrap().Error() != "starting: nope" {
		t.Fatalf("Apply = %v, want a *StartError for a", err)
	}
	if !strings.Contains(err.Error(), `entry "b": failed to start: later`) {
		t.Errorf("Apply = %v, want b's failure too", err)
	}
}

// The instances a reload abandons (replacements that did not start, added
// entries that failed for good) are closed together: three slow to close
// are all closing at once, so the reload waits one ShutdownTimeout for
// them, not one each.
func TestAbandonedInstancesCloseInParallel(t *testing.T) {
	fh := newFakeHost(t, Options{ShutdownTimeout: time.Hour})
	if err := fh.apply(t, `- {id: a, name: fake, config: {value: "1", claim: A}}
- {id: b, name: fake, config: {value: "1", claim: B}}`); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- fh.apply(t, `- {id: a, name: fake, config: {value: "2", claim: A, fail: boom, slowClose: true}}
- {id: b, name: fake, config: {value: "2", claim: B, fail: boom, slowClose: true}}
- {id: c, name: fake, config: {value: "1", fail: boom, slowClose: true}}`)
	}()
	waitUntil(t, "the three abandoned instances closing together", func() bool { return fh.kind.closes() == 3 })
	fh.kind.unblock()
	err := <-done
	for _, want := range []string{`entry "a": the new config did not start, the previous config keeps running: boom`,
		`entry "b": the new config did not start, the previous config keeps running: boom`, `entry "c": failed to start: boom`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Apply = %v, want %q", err, want)
		}
	}
	if diff := cmp.Diff(map[string]int{"a/1": 1, "b/1": 1}, fh.kind.running()); diff != "" {
		t.Errorf("running (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"a": "ready", "b": "ready", "c": "failed: boom"}, fh.states()); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
}
