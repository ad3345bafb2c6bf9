package host_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/host"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/tool"
)

// notReloaded is the message of a reload that failed before Apply.
const notReloaded = "config not reloaded, the running entries are unchanged"

// logRec is a log record a test expects (see mcptest.Record.Match).
type logRec struct {
	level slog.Level
	msg   string
	attrs []any
}

func logInfo(msg string, attrs ...any) logRec  { return logRec{slog.LevelInfo, msg, attrs} }
func logError(msg string, attrs ...any) logRec { return logRec{slog.LevelError, msg, attrs} }

func (l logRec) String() string { return fmt.Sprintf("%s %q %v", l.level, l.msg, l.attrs) }

// entryEnv tags a child server with its entry, so a test can tell which
// entry a running process belongs to (the name survives the env scrub).
const entryEnv = "HOSTTEST_ENTRY"

// rig is a host running the real mcp-client kind against the config file
// path: stdio children re-executed from this test binary, and in-process
// servers for serverNames registered in inMemory.
type rig struct {
	t    *testing.T
	h    *host.Host
	reg  *tool.Registry
	log  *mcptest.Log
	path string

	mu       sync.Mutex
	inMemory map[string]*mcp.Server
	sessions []*mcp.ServerSession // in-memory server sides, closed after the host
}

func newRig(t *testing.T, oneShot bool) *rig {
	t.Helper()
	r := &rig{t: t, reg: tool.NewRegistry(), log: mcptest.NewLog(), inMemory: map[string]*mcp.Server{}}
	r.path = filepath.Join(t.TempDir(), "mcpbridge.yaml")
	kind := clientkind.NewKind(clientkind.KindOptions{
		Server: mcpclient.Options{OneShot: oneShot, CloseGrace: 200 * time.Millisecond, TermGrace: 200 * time.Millisecond},
		NewTransport: func(cfg mcpclient.Config) func() (mcp.Transport, error) {
			r.mu.Lock()
			srv := r.inMemory[cfg.ServerName]
			r.mu.Unlock()
			if srv == nil {
				return nil
			}
			return func() (mcp.Transport, error) {
				ct, st := mcp.NewInMemoryTransports()
				ss, err := srv.Connect(context.Background(), st, nil)
				if err != nil {
					return nil, err
				}
				// Closed after the host: a server session's Close waits
				// for its handlers, a listen stream's among them, which
				// end only when the client goes.
				r.mu.Lock()
				r.sessions = append(r.sessions, ss)
				r.mu.Unlock()
				return ct, nil
			}
		},
	})
	h, err := host.New(host.Options{
		Catalog:  host.NewCatalog(kind),
		Registry: r.reg,
		Logger:   r.log.Logger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	r.h = h
	t.Cleanup(func() {
		defer func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			for _, ss := range r.sessions {
				ss.Close()
			}
		}()
		if err := h.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}

// serve makes serverName an in-process fixture server; hold, if not nil,
// holds its handshakes.
func (r *rig) serve(serverName string, hold func(context.Context) error) {
	srv := mcppeer.Fixture(mcppeer.FixtureOptions{})
	if hold != nil {
		mcptest.HoldHandshake(srv, hold)
	}
	r.mu.Lock()
	r.inMemory[serverName] = srv
	r.mu.Unlock()
}

// child is the YAML of an entry whose server is a fixture child process
// tagged with its id, exposing only add and greet. extra lines go in its
// config.
func child(t *testing.T, id, serverName string, extra ...string) string {
	cmd, args, env := mcptest.ChildCommand(t, "fixture", entryEnv+"="+id)
	var b strings.Builder
	fmt.Fprintf(&b, "- id: %s\n  name: mcp-client\n  config:\n    serverName: %s\n    transport: stdio\n", id, serverName)
	fmt.Fprintf(&b, "    command: %q\n    args: [%q]\n    env: {%s: %s, %s: %s}\n", cmd, args[0], mcppeer.ChildEnv, env[mcppeer.ChildEnv], entryEnv, id)
	b.WriteString("    enabledTools: [add, greet]\n")
	for _, l := range extra {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}

// memory is the YAML of an entry served in process (see serve).
func memory(id, serverName string, extra ...string) string {
	s := fmt.Sprintf("- id: %s\n  name: mcp-client\n  config:\n    serverName: %s\n    transport: stdio\n    command: in-memory\n    enabledTools: [add]\n", id, serverName)
	for _, l := range extra {
		s += "    " + l + "\n"
	}
	return s
}

func (r *rig) write(src string) {
	r.t.Helper()
	if err := os.WriteFile(r.path, []byte(src), 0o600); err != nil {
		r.t.Fatal(err)
	}
}

// load parses the file and applies it.
func (r *rig) load() error {
	r.t.Helper()
	plan, err := host.NewCatalog(clientkind.NewKind(clientkind.KindOptions{})).Parse(r.path, mustRead(r.t, r.path), nil)
	if err != nil {
		r.t.Fatalf("Parse: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return r.h.Apply(ctx, plan)
}

func (r *rig) tools() []string {
	var out []string
	for _, tl := range r.reg.List() {
		out = append(out, tl.Name)
	}
	return out
}

func (r *rig) states() map[string]string {
	out := map[string]string{}
	for _, st := range r.h.Status() {
		out[st.ID] = string(st.State)
	}
	return out
}

// children maps the entry tag of each live child process to its PID.
func children(t *testing.T) map[string]int {
	out := map[string]int{}
	for _, pid := range mcptest.Children() {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			continue // it exited meanwhile
		}
		tag := "?"
		for _, kv := range strings.Split(string(env), "\x00") {
			if v, ok := strings.CutPrefix(kv, entryEnv+"="); ok {
				tag = v
			}
		}
		if _, dup := out[tag]; dup {
			t.Errorf("two children for entry %q", tag)
		}
		out[tag] = pid
	}
	return out
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// waitFor polls cond for up to 60 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	mcptest.Eventually(t, 60*time.Second, cond, "%s", what)
}

// Hot reload of real servers, step by step through the watched file:
// registry contents, the child processes (by entry, with their PIDs, so a
// restart shows) and the host's log lines after each edit.
func TestHotReloadScenarios(t *testing.T) {
	r := newRig(t, false)
	r.serve("mem", nil)
	a := child(t, "a", "alpha")
	b := child(t, "b", "beta")
	r.write(a + b)
	if err := r.load(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	watching := make(chan error, 1)
	go func() { watching <- r.h.WatchFile(ctx, r.path) }()
	defer func() {
		cancel()
		if err := <-watching; err != nil {
			t.Errorf("WatchFile: %v", err)
		}
	}()

	pids := children(t)
	dupServerName := fmt.Sprintf(`%s:%d:17: entry "m": config.serverName: serverName "alpha" is already used by entry "a3" (line 1); pick a unique serverName for each entry`,
		r.path, strings.Count(child(t, "a3", "alpha", "toolCallTimeoutMs: 5000"), "\n")+4)
	steps := []struct {
		name     string
		src      string
		applied  bool // a reload that applies; else wait for logWait
		logWait  logRec
		tools    []string
		children []string // entries with a live child
		kept     []string // entries whose child must not have restarted
		states   map[string]string
		logHas   []logRec
	}{{
		name:     "change a, b untouched",
		src:      child(t, "a", "alpha", "toolCallTimeoutMs: 5000") + b,
		applied:  true,
		tools:    []string{"mcp__alpha__add", "mcp__alpha__greet", "mcp__beta__add", "mcp__beta__greet"},
		children: []string{"a", "b"},
		kept:     []string{"b"},
		logHas: []logRec{
			logInfo("config changed, starting it (the previous config serves until it is ready)", "entry", "a"),
			logInfo("the new config is ready and serves; stopping the previous one", "entry", "a"),
			logInfo("applied", "config", r.path, "changed", "a"),
		},
	}, {
		name:     "add an in-process server",
		src:      child(t, "a", "alpha", "toolCallTimeoutMs: 5000") + b + memory("m", "mem"),
		applied:  true,
		tools:    []string{"mcp__alpha__add", "mcp__alpha__greet", "mcp__beta__add", "mcp__beta__greet", "mcp__mem__add"},
		children: []string{"a", "b"},
		kept:     []string{"a", "b"},
		logHas:   []logRec{logInfo("added, starting", "entry", "m")},
	}, {
		name:     "remove b",
		src:      child(t, "a", "alpha", "toolCallTimeoutMs: 5000") + memory("m", "mem"),
		applied:  true,
		tools:    []string{"mcp__alpha__add", "mcp__alpha__greet", "mcp__mem__add"},
		children: []string{"a"},
		kept:     []string{"a"},
		logHas:   []logRec{logInfo("removed, stopping", "entry", "b")},
	}, {
		name:     "disable a",
		src:      strings.Replace(child(t, "a", "alpha", "toolCallTimeoutMs: 5000"), "  name: mcp-client\n", "  name: mcp-client\n  disabled: true\n", 1) + memory("m", "mem"),
		applied:  true,
		tools:    []string{"mcp__mem__add"},
		children: nil,
		states:   map[string]string{"a": "disabled", "m": "ready"},
		logHas:   []logRec{logInfo("disabled, stopping", "entry", "a")},
	}, {
		name:     "enable it again under a new id, same serverName",
		src:      child(t, "a2", "alpha", "toolCallTimeoutMs: 5000") + memory("m", "mem"),
		applied:  true,
		tools:    []string{"mcp__alpha__add", "mcp__alpha__greet", "mcp__mem__add"},
		children: []string{"a2"},
		states:   map[string]string{"a2": "ready", "m": "ready"},
		logHas:   []logRec{logInfo("removed, stopping", "entry", "a"), logInfo("added, starting", "entry", "a2")},
	}, {
		name:     "rename the id again while it runs, keeping its serverName",
		src:      child(t, "a3", "alpha", "toolCallTimeoutMs: 5000") + memory("m", "mem"),
		applied:  true,
		tools:    []string{"mcp__alpha__add", "mcp__alpha__greet", "mcp__mem__add"},
		children: []string{"a3"},
		states:   map[string]string{"a3": "ready", "m": "ready"},
		logHas: []logRec{
			logInfo("removed, serving until its successor takes over", "entry", "a2", "successor", "a3"),
			logInfo("added, taking over from another entry (which serves until this one is ready)", "entry", "a3", "from", "a2"),
			logInfo("ready and serving; stopping the entry it took over from", "entry", "a3", "from", "a2"),
		},
	}, {
		name:     "an invalid edit changes nothing",
		src:      child(t, "a3", "alpha", "toolCallTimeoutMs: 0") + memory("m", "mem") + "- id: x\n  name: mcp-client\n  config: [",
		logWait:  logError(notReloaded, "config", r.path, "err", mcptest.Contains(r.path+":")),
		tools:    []string{"mcp__alpha__add", "mcp__alpha__greet", "mcp__mem__add"},
		children: []string{"a3"},
		kept:     []string{"a3"},
	}, {
		name:     "a duplicate serverName fails alone, with file:line: the entry keeps its previous config",
		src:      child(t, "a3", "alpha", "toolCallTimeoutMs: 5000") + memory("m", "alpha"),
		applied:  true,
		tools:    []string{"mcp__alpha__add", "mcp__alpha__greet", "mcp__mem__add"},
		children: []string{"a3"},
		kept:     []string{"a3"},
		states:   map[string]string{"a3": "ready", "m": "ready"},
		logHas:   []logRec{logError("the new config did not start, the previous config keeps running", "entry", "m", "err", dupServerName)},
	}, {
		name:     "a failing new config leaves the old one running",
		src:      strings.Replace(child(t, "a3", "alpha", "failOnStartupError: true"), "command: ", "command: /no/such/server", 1) + memory("m", "mem"),
		applied:  true,
		tools:    []string{"mcp__alpha__add", "mcp__alpha__greet", "mcp__mem__add"},
		children: []string{"a3"},
		kept:     []string{"a3"},
		states:   map[string]string{"a3": "ready", "m": "ready"},
		logHas: []logRec{
			logError("the new config did not start, the previous config keeps running", "entry", "a3", "err", mcptest.Contains("/no/such/server")),
		},
	}}
	for _, s := range steps {
		version := r.h.Version()
		errors := r.log.CountRecords(slog.LevelError, notReloaded)
		r.write(s.src)
		if s.applied {
			waitFor(t, s.name+": a reload", func() bool { return r.h.Version() > version })
		} else {
			waitFor(t, s.name+": the log line", func() bool { return r.log.CountRecords(slog.LevelError, notReloaded) > errors })
			r.log.WaitForRecord(t, s.logWait.level, s.logWait.msg, s.logWait.attrs...)
		}
		if diff := cmp.Diff(s.tools, r.tools()); diff != "" {
			t.Errorf("%s: tools (-want +got):\n%s", s.name, diff)
		}
		now := children(t)
		if diff := cmp.Diff(s.children, slices.Sorted(mapsKeys(now))); diff != "" {
			t.Errorf("%s: children (-want +got):\n%s", s.name, diff)
		}
		for _, id := range s.kept {
			if now[id] != pids[id] {
				t.Errorf("%s: the child of %q restarted (pid %d → %d)", s.name, id, pids[id], now[id])
			}
		}
		if s.states != nil {
			if diff := cmp.Diff(s.states, r.states()); diff != "" {
				t.Errorf("%s: states (-want +got):\n%s", s.name, diff)
			}
		}
		for _, want := range s.logHas {
			if !r.log.HasRecord(want.level, want.msg, want.attrs...) {
				t.Errorf("%s: no log record %s; log:\n%s", s.name, want, r.log.Text())
			}
		}
		pids = now
	}

	// The file deleted: everything keeps running, with a warning.
	if err := os.Remove(r.path); err != nil {
		t.Fatal(err)
	}
	r.log.WaitForRecord(t, slog.LevelWarn, "config file deleted; keeping the running entries as they are — restore the file to reload it", "config", r.path, "running", 2)
	if diff := cmp.Diff([]string{"a3"}, slices.Sorted(mapsKeys(children(t)))); diff != "" {
		t.Errorf("children after deletion (-want +got):\n%s", diff)
	}
	for _, rec := range r.log.Records() {
		if rec.Level == slog.LevelError && rec.Message != notReloaded && !strings.Contains(rec.Message, "did not start") && !strings.Contains(rec.Message, "connection") {
			t.Errorf("unexpected error record: %s", rec)
		}
	}
}

func mapsKeys(m map[string]int) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// An edit storm: a hundred writes within about a second lead to a few
// reloads at most, and the host ends on the last write's config with one
// child process.
func TestEditStorm(t *testing.T) {
	r := newRig(t, false)
	r.write(child(t, "s", "s0"))
	if err := r.load(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	watching := make(chan error, 1)
	go func() { watching <- r.h.WatchFile(ctx, r.path) }()
	defer func() {
		cancel()
		<-watching
	}()
	r.log.WaitForRecord(t, slog.LevelDebug, "no entry changed", "config", r.path) // the watch is set up

	tick := time.NewTicker(10 * time.Millisecond)
	for i := 1; i <= 100; i++ {
		<-tick.C // pacing the writes, not waiting for the host
		r.write(child(t, "s", "s"+strconv.Itoa(i)))
	}
	tick.Stop()
	waitFor(t, "the last config", func() bool {
		return slices.Equal(r.tools(), []string{"mcp__s100__add", "mcp__s100__greet"})
	})
	// During a reload the old and the new child run side by side; at the
	// end one is left.
	waitFor(t, "one child", func() bool { return len(mcptest.Children()) == 1 })
	reloads := r.log.CountRecords(slog.LevelInfo, "config file changed, reloading", "config", r.path)
	if reloads < 1 || reloads > 25 {
		t.Errorf("%d reloads for 100 writes, want 1 to 25", reloads)
	}
	t.Logf("%d reloads for 100 writes", reloads)
}

// Servers start in parallel: four servers whose handshakes wait for each
// other (a barrier) can only all become ready if they are started
// together; a sequential start would time every one of them out.
func TestParallelStartup(t *testing.T) {
	r := newRig(t, true)
	barrier := mcptest.NewBarrier(4)
	var src string
	for i := range 4 {
		name := fmt.Sprintf("p%d", i)
		r.serve(name, barrier.Hold)
		src += memory(name, name, "startupTimeoutMs: 60000")
	}
	r.write(src)
	if err := r.load(); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"p0": "ready", "p1": "ready", "p2": "ready", "p3": "ready"}
	if diff := cmp.Diff(want, r.states()); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	if barrier.Arrived() != 4 {
		t.Errorf("%d handshakes reached the barrier", barrier.Arrived())
	}
	for _, st := range r.h.Status() {
		if st.PeerName != "fixture-server" || st.PeerVersion != "1.0.0" || st.ProtocolVersion == "" || st.Tools != 1 || st.Transport != "stdio" || st.Name != st.ID {
			t.Errorf("status %+v", st)
		}
	}
}

// A slow server does not hold back the others: their tools are in the
// registry while it is still in its handshake. Once it answers, readiness
// completes and its tools appear too (a registry change notification).
func TestSlowServerDoesNotDelayOthers(t *testing.T) {
	r := newRig(t, false)
	release := make(chan struct{})
	r.serve("slow", func(ctx context.Context) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	r.serve("fast", nil)
	r.write(memory("slow", "slow", "startupTimeoutMs: 60000") + memory("fast", "fast"))
	changed, stop := r.reg.Watch()
	defer stop()
	done := make(chan error, 1)
	go func() { done <- r.load() }()
	// Its tools are registered a moment before its state says ready.
	waitFor(t, "the fast server to be ready", func() bool {
		_, ok := r.reg.Get("mcp__fast__add")
		return ok && r.states()["fast"] == "ready"
	})
	select {
	case err := <-done:
		t.Fatalf("readiness completed (%v) before the slow server answered", err)
	default:
	}
	if got := r.states(); got["slow"] != "starting" || got["fast"] != "ready" {
		t.Errorf("states while slow starts: %v", got)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a change notification with the slow tools", func() bool {
		<-changed
		_, ok := r.reg.Get("mcp__slow__add")
		return ok
	})
}

// A server that hangs in its handshake: readiness stops waiting at its
// startupTimeoutMs, status says it timed out, and (serving) it keeps
// retrying in the background; its tools appear when it finally answers.
func TestHangingServer(t *testing.T) {
	t.Run("one-shot", func(t *testing.T) {
		r := newRig(t, true)
		release := make(chan struct{})
		t.Cleanup(func() { close(release) })
		r.serve("hung", mcptest.Hang(release))
		r.write(memory("hung", "hung", "startupTimeoutMs: 100") + memory("ok", "ok") +
			// A real process that never speaks MCP.
			"- id: mute\n  name: mcp-client\n  config: {serverName: mute, transport: stdio, command: sleep, args: ['3600'], startupTimeoutMs: 100}\n")
		r.serve("ok", nil)
		if err := r.load(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "settled states", func() bool {
			s := r.states()
			return s["hung"] == "timed-out" && s["mute"] == "timed-out" && s["ok"] == "ready"
		})
		// The instance words its timeout itself, before and after it
		// recorded it (closing the mute child takes its close ladder).
		timedOut := regexp.MustCompile(`^(connecting|tool discovery): no answer within startupTimeoutMs \(100ms\): if the server is slow to start, raise startupTimeoutMs in its entry; else run its command \((in-memory|sleep)\) by hand to see whether it starts and answers on stdout$`)
		for _, st := range r.h.Status() {
			if st.ID != "ok" && !timedOut.MatchString(st.Err) {
				t.Errorf("%s: error %q", st.ID, st.Err)
			}
		}
	})
	t.Run("serving", func(t *testing.T) {
		r := newRig(t, false)
		var mu sync.Mutex
		attempts := 0
		r.serve("late", func(ctx context.Context) error {
			mu.Lock()
			attempts++
			first := attempts == 1
			mu.Unlock()
			if first {
				<-ctx.Done() // hang the first handshake only
				return ctx.Err()
			}
			return nil
		})
		r.write(memory("late", "late", "startupTimeoutMs: 100", "reconnect: {initialDelayMs: 10, maxDelayMs: 10}"))
		if err := r.load(); err != nil {
			t.Fatal(err)
		}
		// Its tools are registered a moment before its state says ready.
		waitFor(t, "the late server ready, with its tools", func() bool {
			_, ok := r.reg.Get("mcp__late__add")
			return ok && r.states()["late"] == "ready"
		})
		r.log.WaitForRecord(t, slog.LevelWarn, "connection attempt failed", "entry", "late", "server", "late",
			"err", mcptest.Contains("connecting: no answer within startupTimeoutMs (100ms)"))
	})
}
