package host

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// callText executes name in fh's registry and returns its text, or the
// error text.
func callText(fh *fakeHost, name string) string {
	res, err := fh.opts.Registry.Execute(context.Background(), name, nil)
	if err != nil {
		return "error: " + err.Error()
	}
	return res.Text()
}

// waitUntil polls cond for up to 30 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// While a changed entry's new instance starts, the old one serves its
// tool; the new one's first publish swaps the tool over in one step (a
// reader never finds it missing), and only then is the old one closed.
func TestSuccessionHandsOverTools(t *testing.T) {
	fh := newFakeHost(t, Options{})
	if err := fh.apply(t, `- {id: a, name: fake, config: {value: "1", claim: S}}`); err != nil {
		t.Fatal(err)
	}
	reg := fh.opts.Registry
	var misses, reads atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, ok := reg.Get("t-S"); !ok {
				misses.Add(1)
			}
			reads.Add(1)
		}
	})

	done := make(chan error, 1)
	go func() { done <- fh.apply(t, `- {id: a, name: fake, config: {value: "2", claim: S, hold: true}}`) }()
	waitUntil(t, "the new instance", func() bool { return fh.kind.running()["a/2"] == 1 })
	if got := callText(fh, "t-S"); got != "a/1" {
		t.Errorf("while the new instance starts, the tool answers %q, want the old instance's", got)
	}
	if got := fh.states()["a"]; got != "starting" {
		t.Errorf("state while the new instance starts: %q", got)
	}
	fh.kind.unblock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	if got := callText(fh, "t-S"); got != "a/2" {
		t.Errorf("after the reload, the tool answers %q, want the new instance's", got)
	}
	if diff := cmp.Diff([]string{"start a/2", "close a/1"}, fh.kind.takeEvents()[1:]); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if misses.Load() != 0 {
		t.Errorf("the tool was missing in %d of %d reads", misses.Load(), reads.Load())
	}
	// The claim moved: the old instance released nothing the new one holds.
	fh.mu.Lock()
	owner := fh.reserved[claimKey{"fake", Claim{"claim", "S"}}]
	fh.mu.Unlock()
	if owner == nil || owner.pe.Spec.Config.(fakeConfig).Value != "2" {
		t.Errorf("claim S is held by %+v, want the new instance", owner)
	}
}

// A call in flight on the old instance when its successor takes over
// finishes (Drainer) before the old instance is closed; one that outlasts
// ShutdownTimeout is cut off, with a warning.
func TestSuccessionDrainsCallsInFlight(t *testing.T) {
	t.Run("finishes", func(t *testing.T) {
		fh := newFakeHost(t, Options{})
		if err := fh.apply(t, `- {id: a, name: fake, config: {value: "1", claim: S, slowCall: true}}`); err != nil {
			t.Fatal(err)
		}
		call := make(chan string, 1)
		go func() { call <- callText(fh, "t-S") }()
		waitUntil(t, "the call in flight", func() bool { return inflight(fh, "a") == 1 })

		v0 := fh.opts.Registry.Version()
		done := make(chan error, 1)
		go func() { done <- fh.apply(t, `- {id: a, name: fake, config: {value: "2", claim: S}}`) }()
		waitUntil(t, "the new instance's tool", func() bool { return fh.opts.Registry.Version() > v0 })
		if got := callText(fh, "t-S"); got != "a/2" {
			t.Errorf("after the swap, the tool answers %q, want the new instance's", got)
		}
		select {
		case err := <-done:
			t.Fatalf("Apply returned (%v) while a call was in flight on the old instance", err)
		case <-time.After(50 * time.Millisecond): // a negative check: Apply must still be draining
		}
		if fh.kind.running()["a/1"] != 1 {
			t.Fatalf("the old instance was closed with a call in flight")
		}
		fh.kind.unblock() // the call ends
		if got := <-call; got != "a/1" {
			t.Errorf("the call in flight ended with %q, want the old instance's answer", got)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]int{"a/2": 1}, fh.kind.running()); diff != "" {
			t.Errorf("running (-want +got):\n%s", diff)
		}
	})
	t.Run("outlasts the shutdown timeout", func(t *testing.T) {
		fh := newFakeHost(t, Options{ShutdownTimeout: 50 * time.Millisecond})
		if err := fh.apply(t, `- {id: a, name: fake, config: {value: "1", claim: S, slowCall: true}}`); err != nil {
			t.Fatal(err)
		}
		call := make(chan string, 1)
		go func() { call <- callText(fh, "t-S") }()
		waitUntil(t, "the call in flight", func() bool { return inflight(fh, "a") == 1 })
		if err := fh.apply(t, `- {id: a, name: fake, config: {value: "2", claim: S}}`); err != nil {
			t.Fatal(err)
		}
		if got := <-call; got != "Error: instance a/1 closed during the call" {
			t.Errorf("the call in flight ended with %q", got)
		}
		fh.log.WaitForRecord(t, slog.LevelWarn, "the previous instance still has calls in flight; closing it", "entry", "a", "timeout", "50ms")
	})
}

// inflight returns the calls in flight on the instance of entry id.
func inflight(fh *fakeHost, id string) int {
	fh.mu.Lock()
	var in *fakeInstance
	for _, u := range fh.units {
		if u.pe.Entry.ID == id {
			in, _ = u.inst.(*fakeInstance)
		}
	}
	fh.mu.Unlock()
	if in == nil {
		return 0
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.inflight
}

// An Apply interrupted while a new instance starts abandons it: the old
// instance keeps serving, untouched.
func TestSuccessionInterrupted(t *testing.T) {
	fh := newFakeHost(t, Options{})
	if err := fh.apply(t, `- {id: a, name: fake, config: {value: "1", claim: S}}`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	plan := fh.plan(t, `- {id: a, name: fake, config: {value: "2", claim: S, hold: true}}`)
	done := make(chan error, 1)
	go func() { done <- fh.Apply(ctx, plan) }()
	waitUntil(t, "the new instance", func() bool { return fh.kind.running()["a/2"] == 1 })
	cancel()
	err := <-done
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Apply = %v, want context.Canceled", err)
	}
	var se *StartError
	if !errors.As(err, &se) || se.Kept != "a" || !strings.Contains(se.Error(), "the previous config keeps running: the reload was interrupted") {
		t.Errorf("Apply = %v, want a *StartError keeping a", err)
	}
	if diff := cmp.Diff(map[string]int{"a/1": 1}, fh.kind.running()); diff != "" {
		t.Errorf("running (-want +got):\n%s", diff)
	}
	if got := callText(fh, "t-S"); got != "a/1" {
		t.Errorf("the tool answers %q, want the old instance's", got)
	}
	if diff := cmp.Diff(map[string]string{"a": "ready"}, fh.states()); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
}

// Close during a succession closes both instances and leaves no tool.
func TestCloseDuringSuccession(t *testing.T) {
	fh := newFakeHost(t, Options{})
	if err := fh.apply(t, `- {id: a, name: fake, config: {value: "1", claim: S}}`); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- fh.apply(t, `- {id: a, name: fake, config: {value: "2", claim: S, hold: true}}`) }()
	waitUntil(t, "the new instance", func() bool { return fh.kind.running()["a/2"] == 1 })
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("interrupted Apply = %v, want context.Canceled", err)
	}
	if got := fh.kind.running(); len(got) != 0 {
		t.Errorf("still running: %v", got)
	}
	if n := fh.opts.Registry.Len(); n != 0 {
		t.Errorf("%d tools left after Close", n)
	}
}

// An Apply interrupted in its first wave starts nothing of the next: an
// added entry waiting for a claim is not started, and says why.
func TestSuccessionInterruptedBeforeNextWave(t *testing.T) {
	fh := newFakeHost(t, Options{})
	if err := fh.apply(t, `- {id: a, name: fake, config: {value: "1", claim: S}}`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	plan := fh.plan(t, "- {id: a, name: fake, config: {value: '2', claim: T, hold: true}}\n- {id: b, name: fake, config: {value: '1', claim: S}}")
	done := make(chan error, 1)
	go func() { done <- fh.Apply(ctx, plan) }()
	waitUntil(t, "the new instance", func() bool { return fh.kind.running()["a/2"] == 1 })
	cancel()
	err := <-done
	if err == nil || !strings.Contains(err.Error(), `entry "b": failed to start: not started, the reload was interrupted: context canceled`) {
		t.Errorf("Apply = %v", err)
	}
	if diff := cmp.Diff(map[string]int{"a/1": 1}, fh.kind.running()); diff != "" {
		t.Errorf("running (-want +got):\n%s", diff)
	}
}

// A restart whose context has ended by the time its new instance is
// ready (a console request given up) keeps the new instance: it settled,
// so it took over, and abandoning it could undo what it already did.
func TestRestartSettledBeforeItsContextEnded(t *testing.T) {
	fh := newFakeHost(t, Options{})
	if err := fh.apply(t, `- {id: a, name: fake, config: {value: "1", claim: S}}`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 64 {
		fh.kind.takeEvents()
		err := fh.Restart(ctx, "a")
		if se, ok := errors.AsType[*StartError](err); ok {
			t.Fatalf("restart %d: the settled new instance was abandoned: %v", i+1, se)
		}
		if diff := cmp.Diff([]string{"start a/1", "close a/1"}, fh.kind.takeEvents()); diff != "" {
			t.Fatalf("restart %d: events (-want +got):\n%s", i+1, diff)
		}
	}
	if diff := cmp.Diff(map[string]string{"a": "ready"}, fh.states()); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
}

// A replacement that published its tools before its first attempt
// settled (an mcp-client slow on logging/setLevel after its sync) has
// taken the old ones' place: when its startup timeout passes, it is kept,
// not closed with the tools it took over (the old instance could never
// publish them again), and its state says it is not ready yet.
func TestSuccessionKeepsAPublishedReplacement(t *testing.T) {
	fh := newFakeHost(t, Options{})
	if err := fh.apply(t, `- {id: a, name: fake, config: {value: "1", claim: S}}`); err != nil {
		t.Fatal(err)
	}
	if err := fh.apply(t, `- {id: a, name: fake, config: {value: "2", claim: S, early: true, hold: true, timeoutMs: 30}}`); err != nil {
		t.Fatalf("Apply = %v, want the published replacement kept", err)
	}
	if got := callText(fh, "t-S"); got != "a/2" {
		t.Errorf("after the startup timeout, the tool answers %q, want the replacement's", got)
	}
	if diff := cmp.Diff(map[string]int{"a/2": 1}, fh.kind.running()); diff != "" {
		t.Errorf("running (-want +got):\n%s", diff)
	}
	st := fh.Status()[0]
	if st.State != StateTimedOut || st.Tools != 1 {
		t.Errorf("status %s with %d tools, want timed-out with the replacement's tool", st.State, st.Tools)
	}
	fh.kind.unblock()
	waitUntil(t, "the replacement ready", func() bool { return fh.states()["a"] == "ready" })
}
