package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/tool"
)

// Make-before-break reloads against real MCP servers: child processes and
// in-process servers, through the real mcp-client kind.

// call executes a tool of the rig's registry and returns its text; a
// failed call fails the test.
func (r *rig) call(ctx context.Context, name, args string) string {
	r.t.Helper()
	res, err := r.reg.Execute(ctx, name, json.RawMessage(args))
	if err != nil || res.IsError {
		r.t.Errorf("calling %s: %v %s", name, err, res.Text())
	}
	return res.Text()
}

// watchTools counts, until the returned stop is called, the reads of the
// registry (every 2 ms, and after every change notification) that do not
// find every one of names.
func (r *rig) watchTools(names ...string) (stop func() (misses, reads int64)) {
	var missed, read atomic.Int64
	changed, unwatch := r.reg.Watch()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			case <-changed:
			}
			read.Add(1)
			for _, n := range names {
				if _, ok := r.reg.Get(n); !ok {
					missed.Add(1)
					break
				}
			}
		}
	})
	return func() (int64, int64) {
		close(done)
		wg.Wait()
		unwatch()
		return missed.Load(), read.Load()
	}
}

// (1) Ten edits of one entry's toolCallTimeoutMs: each starts a new child
// process beside the old one and swaps the tools over; a reader polling
// the registry never finds them missing.
func TestReloadNeverHidesTools(t *testing.T) {
	r := newRig(t, false)
	r.write(child(t, "e", "e"))
	if err := r.load(); err != nil {
		t.Fatal(err)
	}
	pid := children(t)["e"]
	stop := r.watchTools("mcp__e__add", "mcp__e__greet")
	for i := 1; i <= 10; i++ {
		r.write(child(t, "e", "e", fmt.Sprintf("toolCallTimeoutMs: %d", 10000+i)))
		if err := r.load(); err != nil {
			t.Fatalf("edit %d: %v", i, err)
		}
		now := children(t)
		if len(now) != 1 || now["e"] == 0 || now["e"] == pid {
			t.Fatalf("edit %d: children %v, want one new child of e (the old was pid %d)", i, now, pid)
		}
		pid = now["e"]
	}
	misses, reads := stop()
	if misses != 0 {
		t.Errorf("the tools were missing in %d of %d reads", misses, reads)
	}
	t.Logf("%d reads of the registry across 10 reloads, none without the tools", reads)
	if got := r.call(context.Background(), "mcp__e__add", `{"a": 2, "b": 3}`); got != "5" {
		t.Errorf("add = %q", got)
	}
	if n := r.log.CountRecords(slog.LevelInfo, "the new config is ready and serves; stopping the previous one", "entry", "e"); n != 10 {
		t.Errorf("%d hand-overs logged, want 10", n)
	}
}

// memorySlow is an in-process entry exposing add and slow.
func memorySlow(id, serverName string, extra ...string) string {
	return strings.Replace(memory(id, serverName, extra...), "enabledTools: [add]", "enabledTools: [add, slow]", 1)
}

// (2) A call in flight on the old instance when its entry is edited
// completes: the old instance serves until the new one is ready (here its
// handshake is held until the call has answered).
func TestReloadLetsCallInFlightFinish(t *testing.T) {
	r := newRig(t, false)
	var handshakes atomic.Int32
	held := make(chan struct{})
	release := make(chan struct{})
	r.serve("mem", func(ctx context.Context) error {
		if handshakes.Add(1) == 1 {
			return nil // the first instance
		}
		close(held)
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	r.write(memorySlow("m", "mem"))
	if err := r.load(); err != nil {
		t.Fatal(err)
	}

	started := make(chan struct{})
	var once sync.Once
	ctx := tool.WithProgress(context.Background(), func(p tool.Progress) {
		if p.Message == "started" {
			once.Do(func() { close(started) })
		}
	})
	answer := make(chan string, 1)
	go func() { answer <- r.call(ctx, "mcp__mem__slow", `{"ms": 300}`) }()
	<-started // the call is running on the old instance

	r.write(memorySlow("m", "mem", "toolCallTimeoutMs: 30000"))
	applied := make(chan error, 1)
	go func() { applied <- r.load() }()
	<-held // the new instance is starting
	if got := <-answer; got != "slept 300 ms" {
		t.Errorf("the call in flight answered %q", got)
	}
	select {
	case err := <-applied:
		t.Fatalf("Apply returned (%v) before the new instance was ready", err)
	default:
	}
	close(release)
	if err := <-applied; err != nil {
		t.Fatal(err)
	}
	if got := r.call(context.Background(), "mcp__mem__add", `{"a": 1, "b": 1}`); got != "2" {
		t.Errorf("add after the reload = %q", got)
	}
	if diff := cmp.Diff(map[string]string{"m": "ready"}, r.states()); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
}

// (2b) A call still running on the old instance when its replacement has
// taken over finishes there: the host drains the old instance (mcp-client
// is a host.Drainer) before closing it, which would cut the call off with
// "server is closing".
func TestReloadDrainsCallInFlight(t *testing.T) {
	r := newRig(t, false)
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := mcppeer.Fixture(mcppeer.FixtureOptions{})
	mcp.AddTool(srv, &mcp.Tool{Name: "wait", Description: "Waits until the test releases it."},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			entered <- struct{}{}
			select {
			case <-release:
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		})
	r.mu.Lock()
	r.inMemory["mem"] = srv
	r.mu.Unlock()
	entry := func(extra ...string) string {
		return strings.Replace(memory("m", "mem", extra...), "enabledTools: [add]", "enabledTools: [add, wait]", 1)
	}
	r.write(entry())
	if err := r.load(); err != nil {
		t.Fatal(err)
	}

	answer := make(chan string, 1)
	go func() { answer <- r.call(context.Background(), "mcp__mem__wait", `{}`) }()
	<-entered // the call is running on the old instance

	r.write(entry("toolCallTimeoutMs: 30000"))
	applied := make(chan error, 1)
	go func() { applied <- r.load() }()
	// The new instance takes over while the call is still running, and
	// serves the calls that follow.
	r.log.WaitForRecord(t, slog.LevelInfo, "the new config is ready and serves; stopping the previous one", "entry", "m")
	if got := r.call(context.Background(), "mcp__mem__add", `{"a": 2, "b": 2}`); got != "4" {
		t.Errorf("add after the takeover = %q", got)
	}
	select {
	case got := <-answer:
		t.Fatalf("the call answered %q before it was released", got)
	case err := <-applied:
		t.Fatalf("Apply returned (%v) while the old instance had a call in flight", err)
	default:
	}
	close(release)
	if got := <-answer; got != "released" {
		t.Errorf("the call in flight answered %q", got)
	}
	if err := <-applied; err != nil {
		t.Fatal(err)
	}
	if r.log.HasRecord(slog.LevelWarn, "the previous instance still has calls in flight; closing it") {
		t.Errorf("the drain gave up; log:\n%s", r.log.Text())
	}
	if diff := cmp.Diff(map[string]string{"m": "ready"}, r.states()); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
}

// (3) A new config that does not start leaves the old instance serving,
// untouched (the same process), and the error says so.
func TestReloadKeepsOldConfigWhenNewFails(t *testing.T) {
	broken := func(t *testing.T, extra ...string) string {
		return strings.Replace(child(t, "e", "e", extra...), "command: ", "command: /no/such/server", 1)
	}
	for _, tt := range []struct {
		name   string
		src    func(t *testing.T) string
		reason string // a regexp
	}{
		{"failOnStartupError", func(t *testing.T) string { return broken(t, "failOnStartupError: true") }, `start "/no/such/server`},
		{"retrying", func(t *testing.T) string { return broken(t, "failOnStartupError: false") }, `start "/no/such/server`},
		{"startup timeout", func(*testing.T) string {
			// A real process that never speaks MCP.
			return "- id: e\n  name: mcp-client\n  config: {serverName: e, transport: stdio, command: sleep, args: ['3600'], startupTimeoutMs: 300}\n"
		}, `connecting: no answer within startupTimeoutMs \(300ms\)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, false)
			r.write(child(t, "e", "e"))
			if err := r.load(); err != nil {
				t.Fatal(err)
			}
			pid := children(t)["e"]
			stop := r.watchTools("mcp__e__add", "mcp__e__greet")
			r.write(tt.src(t))
			err := r.load()
			misses, reads := stop()
			var se *host.StartError
			if !errors.As(err, &se) || se.ID != "e" || se.Kept != "e" {
				t.Fatalf("Apply = %v, want a *StartError keeping e", err)
			}
			const says = `entry "e": the new config did not start, the previous config keeps running: `
			want := regexp.MustCompile("^" + regexp.QuoteMeta(says) + ".*" + tt.reason)
			if !want.MatchString(err.Error()) {
				t.Errorf("Apply = %q, want %s", err, want)
			}
			if !r.log.HasRecord(slog.LevelError, "the new config did not start, the previous config keeps running", "entry", "e", "err", se.Err.Error()) {
				t.Errorf("no error record says so; log:\n%s", r.log.Text())
			}
			if misses != 0 {
				t.Errorf("the tools were missing in %d of %d reads", misses, reads)
			}
			if diff := cmp.Diff([]string{"mcp__e__add", "mcp__e__greet"}, r.tools()); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if got := r.call(context.Background(), "mcp__e__add", `{"a": 2, "b": 3}`); got != "5" {
				t.Errorf("add = %q", got)
			}
			if now := children(t); len(now) != 1 || now["e"] != pid {
				t.Errorf("children %v, want only the old child of e (pid %d)", now, pid)
			}
			if diff := cmp.Diff(map[string]string{"e": "ready"}, r.states()); diff != "" {
				t.Errorf("states (-want +got):\n%s", diff)
			}
		})
	}
}

// (4) Renaming an id while keeping its serverName: the removed entry is
// the added one's predecessor, so the tools never vanish; if the renamed
// entry's config fails, the removed one keeps running until a plan that
// works takes over from it.
func TestReloadRenameKeepsServerName(t *testing.T) {
	r := newRig(t, false)
	r.write(child(t, "a", "alpha"))
	if err := r.load(); err != nil {
		t.Fatal(err)
	}
	tools := []string{"mcp__alpha__add", "mcp__alpha__greet"}
	stop := r.watchTools(tools...)
	r.write(child(t, "a2", "alpha"))
	if err := r.load(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"a2": "ready"}, r.states()); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	pid := children(t)["a2"]
	if now := children(t); len(now) != 1 || pid == 0 {
		t.Errorf("children %v, want only a2's", now)
	}

	// Renamed again, to a config that fails: a2 keeps running, listed.
	r.write(strings.Replace(child(t, "a3", "alpha", "failOnStartupError: true"), "command: ", "command: /no/such/server", 1))
	err := r.load()
	var se *host.StartError
	if !errors.As(err, &se) || se.ID != "a3" || se.Kept != "a2" ||
		!strings.HasPrefix(err.Error(), `entry "a3": the new config did not start, entry "a2" keeps running its previous config: `) {
		t.Fatalf("Apply = %v, want a *StartError keeping a2", err)
	}
	if got := r.states(); got["a2"] != "ready" || got["a3"] != "failed" {
		t.Errorf("states %v, want a2 ready and a3 failed", got)
	}
	if now := children(t); len(now) != 1 || now["a2"] != pid {
		t.Errorf("children %v, want only a2's (pid %d)", now, pid)
	}

	// Fixed: a3 takes over from a2.
	r.write(child(t, "a3", "alpha"))
	if err := r.load(); err != nil {
		t.Fatal(err)
	}
	misses, reads := stop()
	if misses != 0 {
		t.Errorf("the tools were missing in %d of %d reads", misses, reads)
	}
	if diff := cmp.Diff(map[string]string{"a3": "ready"}, r.states()); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	if now := children(t); len(now) != 1 || now["a3"] == 0 {
		t.Errorf("children %v, want only a3's", now)
	}
	if diff := cmp.Diff(tools, r.tools()); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

// (5) Swapping the serverNames of two entries in one reload is refused:
// each old instance would have to give its name up before its successor
// is ready. Both keep running; in two reloads the swap works.
func TestReloadServerNameSwap(t *testing.T) {
	r := newRig(t, false)
	r.write(child(t, "a", "x") + child(t, "b", "y"))
	if err := r.load(); err != nil {
		t.Fatal(err)
	}
	pids := children(t)
	all := []string{"mcp__x__add", "mcp__x__greet", "mcp__y__add", "mcp__y__greet"}

	r.write(child(t, "a", "y") + child(t, "b", "x"))
	err := r.load()
	for _, want := range []string{
		`entry "a": the new config did not start, the previous config keeps running: serverName "y" is held by entry "b", whose new config needs a name this entry holds: each old instance serves until its successor is ready, so names cannot be swapped in one reload — swap them in two (first move one entry to an unused name)`,
		`entry "b": the new config did not start, the previous config keeps running: serverName "x" is held by entry "a", whose new config needs a name this entry holds`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Apply = %v\nwant it to contain %q", err, want)
		}
	}
	if diff := cmp.Diff(pids, children(t)); diff != "" {
		t.Errorf("children (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(all, r.tools()); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"a": "ready", "b": "ready"}, r.states()); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}

	// In two reloads: a moves out of the way, then b takes x and a takes
	// y (a waits until b's old instance, holding y, has closed).
	r.write(child(t, "a", "tmp") + child(t, "b", "y"))
	if err := r.load(); err != nil {
		t.Fatal(err)
	}
	r.write(child(t, "a", "y") + child(t, "b", "x"))
	if err := r.load(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(all, r.tools()); diff != "" {
		t.Errorf("tools after the swap in two reloads (-want +got):\n%s", diff)
	}
	now := children(t)
	if len(now) != 2 || now["a"] == pids["a"] || now["b"] == pids["b"] {
		t.Errorf("children %v, want new ones for a and b (before: %v)", now, pids)
	}
	for _, st := range r.h.Status() {
		want := map[string]string{"a": "y", "b": "x"}[st.ID]
		if st.State != host.StateReady || st.Name != want {
			t.Errorf("%s: %s %s, want ready %s", st.ID, st.State, st.Name, want)
		}
	}
}
