package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// The debounce, on a fake clock: one reload at the start, then one per
// burst, Debounce after its last event about the file; other files'
// events, and watcher errors, reload nothing, but an overflow of the
// kernel's queue, which may have dropped the file's event.
func TestWatchLoopDebounce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fh := newFakeHost(t, Options{})
		events := make(chan fsnotify.Event)
		errs := make(chan error)
		var reloads atomic.Int32
		var saved atomic.Bool // as the last reload was told
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		path := "/cfg/./mcpbridge.yaml"
		go func() {
			defer close(done)
			fh.watchLoop(ctx, events, errs, path, func(s bool) { saved.Store(s); reloads.Add(1) })
		}()

		synctest.Wait()
		if reloads.Load() != 0 {
			t.Fatalf("reloaded before the debounce")
		}
		time.Sleep(DefaultDebounce)
		synctest.Wait()
		if reloads.Load() != 1 {
			t.Fatalf("%d reloads after the initial debounce, want 1", reloads.Load())
		}
		if saved.Load() {
			t.Errorf("the read at the start was told of a save")
		}

		// A storm: 100 writes 10ms apart, plus noise about other files.
		for i := range 100 {
			events <- fsnotify.Event{Name: "/cfg/mcpbridge.yaml", Op: fsnotify.Write}
			events <- fsnotify.Event{Name: "/cfg/other.yaml", Op: fsnotify.Write}
			if i == 50 {
				errs <- errors.New("queue overflow")
			}
			time.Sleep(10 * time.Millisecond)
		}
		synctest.Wait()
		if reloads.Load() != 1 {
			t.Fatalf("reloaded during the storm")
		}
		time.Sleep(DefaultDebounce - 10*time.Millisecond)
		synctest.Wait()
		if reloads.Load() != 2 {
			t.Fatalf("%d reloads after the storm, want 2", reloads.Load())
		}
		if !saved.Load() {
			t.Errorf("the reload after the storm was not told of a save")
		}
		if !fh.log.HasRecord(slog.LevelWarn, "watching the config file failed", "config", "/cfg/./mcpbridge.yaml", "err", "queue overflow") {
			t.Errorf("the watcher error was not logged: %q", fh.log.Lines())
		}

		// Noise alone reloads nothing.
		events <- fsnotify.Event{Name: "/cfg/other.yaml", Op: fsnotify.Create}
		time.Sleep(time.Second)
		synctest.Wait()
		if reloads.Load() != 2 {
			t.Fatalf("another file's event reloaded")
		}

		// The kernel's queue overflowed: the file's event may be among
		// those dropped, so it is read again, as for a change.
		errs <- fmt.Errorf("reading events: %w", fsnotify.ErrEventOverflow)
		time.Sleep(DefaultDebounce)
		synctest.Wait()
		if reloads.Load() != 3 {
			t.Fatalf("%d reloads after an event overflow, want 3", reloads.Load())
		}
		if !saved.Load() {
			t.Errorf("the reload after an overflow was not told of a save")
		}
		cancel()
		<-done
	})
}

// The loop ends when the watcher's channels close.
func TestWatchLoopEndsWithWatcher(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fh := newFakeHost(t, Options{})
		for _, closeEvents := range []bool{true, false} {
			events := make(chan fsnotify.Event)
			errs := make(chan error)
			if closeEvents {
				close(events)
			} else {
				close(errs)
			}
			fh.watchLoop(context.Background(), events, errs, "f.yaml", func(bool) { t.Error("reloaded") })
		}
	})
}

// reload, without a watcher: each outcome and its log line.
func TestReload(t *testing.T) {
	fh := newFakeHost(t, Options{Lookup: func(string) (string, bool) { return "hunter2", true }})
	path := filepath.Join(t.TempDir(), "f.yaml")
	write := func(src string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`- {id: a, name: fake, config: {value: "1", secret: "${S}"}}`)
	plan, err := fh.opts.Catalog.Parse(path, mustRead(t, path), fh.opts.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	if err := fh.Apply(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	fh.kind.takeEvents()
	ctx := context.Background()

	// Unchanged entries (a comment added): no Apply at all.
	write("# hello\n" + `- {id: a, name: fake, config: {value: "1", secret: "${S}"}}`)
	fh.reload(ctx, path, true)
	if fh.Version() != 1 || !fh.log.HasRecord(slog.LevelDebug, "no entry changed", "config", path) {
		t.Errorf("a comment caused an Apply (version %d)", fh.Version())
	}

	// An invalid entry fails alone, with file:line: a, unchanged, runs on.
	write("- {id: a, name: fake, config: {value: \"1\", secret: \"${S}\"}}\n- {id: b, name: nope}\n")
	fh.reload(ctx, path, true)
	fh.log.WaitForRecord(t, slog.LevelError, "failed to start", "entry", "b", "err", mcptest.Contains(path+`:2:17: entry "b": name: unknown plugin "nope"`))
	want := map[string]string{"a": "ready", "b": "failed: " + path + `:2:17: entry "b": name: unknown plugin "nope" (known: fake)`}
	if diff := cmp.Diff(want, fh.states()); diff != "" {
		t.Errorf("states (-want +got):\n%s", diff)
	}
	// Invalid YAML: nothing changes, the problem is logged with file:line,
	// never with the expanded secret.
	write("- id: a\n  name: [fake\n")
	fh.reload(ctx, path, true)
	fh.log.WaitForRecord(t, slog.LevelError, notReloaded, "config", path, "err", mcptest.Contains(path+`:2:9: invalid YAML: did not find expected`))
	if fh.Version() != 2 || len(fh.kind.takeEvents()) != 0 {
		t.Errorf("an invalid file changed something (version %d)", fh.Version())
	}

	// Deleted: everything keeps running, with a warning.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	fh.reload(ctx, path, true)
	fh.log.WaitForRecord(t, slog.LevelWarn, "config file deleted; keeping the running entries as they are — restore the file to reload it", "config", path, "running", 1)

	// Unreadable (a directory in its place).
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	fh.reload(ctx, path, true)
	fh.log.WaitForRecord(t, slog.LevelError, notReloaded, "config", path, "err", mcptest.Contains("config file "+path+" is a directory"))
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}

	// Back, changed: applied.
	write(`- {id: a, name: fake, config: {value: "2", secret: "${S}"}}`)
	fh.reload(ctx, path, true)
	if diff := cmp.Diff([]string{"start a/2", "close a/1"}, fh.kind.takeEvents()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	fh.log.WaitForRecord(t, slog.LevelInfo, "config file changed, reloading", "config", path)
	for _, line := range fh.log.Lines() {
		if strings.Contains(line, "hunter2") {
			t.Errorf("a log line shows the expanded secret: %s", line)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// WatchFile with the real watcher: an editor's rename-over save, an
// in-place write, a deletion and a restore each take effect.
func TestWatchFile(t *testing.T) {
	fh := newFakeHost(t, Options{})
	dir := t.TempDir()
	path := filepath.Join(dir, "f.yaml")
	save := func(src string) { t.Helper(); saveAsEditors(t, path, src) }
	save(`- {id: a, name: fake, config: {value: "1"}}`)
	stop := fh.watching(t, path)
	waitRunning := func(want map[string]int) { t.Helper(); fh.waitRunning(t, want) }

	save(`- {id: a, name: fake, config: {value: "2"}}`)
	waitRunning(map[string]int{"a/2": 1})

	if err := os.WriteFile(path, []byte(`- {id: a, name: fake, config: {value: "3"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	waitRunning(map[string]int{"a/3": 1})

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	fh.log.WaitForRecord(t, slog.LevelWarn, "config file deleted; keeping the running entries as they are — restore the file to reload it", "config", path, "running", 1)
	save(`- {id: b, name: fake, config: {value: "1"}}`)
	waitRunning(map[string]int{"b/1": 1})
	stop()

	// Close ends a watch too.
	done := make(chan error, 1)
	checks := fh.log.CountRecords(slog.LevelDebug, "no entry changed", "config", path)
	go func() { done <- fh.WatchFile(context.Background(), path) }()
	deadline := time.Now().Add(30 * time.Second)
	for fh.log.CountRecords(slog.LevelDebug, "no entry changed", "config", path) == checks { // the new watch is set up
		if time.Now().After(deadline) {
			t.Fatal("the second watch never checked the file")
		}
		time.Sleep(5 * time.Millisecond)
	}
	fh.Close()
	if err := <-done; err != nil {
		t.Errorf("WatchFile after Close = %v", err)
	}
}

func TestWatchFileMissingDirectory(t *testing.T) {
	fh := newFakeHost(t, Options{})
	path := filepath.Join(t.TempDir(), "nope", "f.yaml")
	err := fh.WatchFile(context.Background(), path)
	if err == nil || !strings.Contains(err.Error(), "watching "+path+": its directory ") {
		t.Errorf("WatchFile = %v", err)
	}
}

// Options.Parse reads the re-read file in the program's way (here: a
// file of one value per line becomes entries); its errors are logged and
// change nothing.
func TestReloadWithParse(t *testing.T) {
	var fh *fakeHost
	fh = newFakeHost(t, Options{Parse: func(path string, data []byte) (*Plan, error) {
		if strings.Contains(string(data), "bad") {
			return nil, errors.New(path + ":1:1: not a value")
		}
		var yaml strings.Builder
		for v := range strings.FieldsSeq(string(data)) {
			yaml.WriteString(`- {id: ` + v + `, name: fake, config: {value: "` + v + `"}}` + "\n")
		}
		return fh.opts.Catalog.Parse(path, []byte(yaml.String()), nil)
	}})
	path := filepath.Join(t.TempDir(), "values.txt")
	if err := os.WriteFile(path, []byte("x y"), 0o600); err != nil {
		t.Fatal(err)
	}
	fh.reload(context.Background(), path, true)
	if diff := cmp.Diff([]string{"start x/x", "start y/y"}, sorted(fh.kind.takeEvents())); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if err := os.WriteFile(path, []byte("bad"), 0o600); err != nil {
		t.Fatal(err)
	}
	fh.reload(context.Background(), path, true)
	fh.log.WaitForRecord(t, slog.LevelError, notReloaded, "config", path, "err", mcptest.Contains(path+":1:1: not a value"))
	if len(fh.kind.takeEvents()) != 0 {
		t.Error("a file Parse refused changed something")
	}
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

// A config that is a symbolic link into another directory (a dotfiles
// repository) reloads when the file it leads to is replaced there, as an
// editor, or mcpbridge add, saves it: no event names the link.
func TestWatchFileThroughASymlink(t *testing.T) {
	fh := newFakeHost(t, Options{})
	dotfiles, home := t.TempDir(), t.TempDir()
	target := filepath.Join(dotfiles, "mcpbridge.yaml")
	saveAsEditors(t, target, `- {id: a, name: fake, config: {value: "1"}}`)
	path := filepath.Join(home, "mcpbridge.yaml")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	stop := fh.watching(t, path)
	saveAsEditors(t, target, `- {id: a, name: fake, config: {value: "2"}}`)
	fh.waitRunning(t, map[string]int{"a/2": 1})
	stop()
}

// watching applies the config at path, watches it (WatchFile) until the
// watch made its first check, and returns what stops the watch and checks
// that it ended cleanly.
func (fh *fakeHost) watching(t *testing.T, path string) (stop func()) {
	t.Helper()
	if err := fh.Apply(context.Background(), fh.plan(t, string(mustRead(t, path)))); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fh.WatchFile(ctx, path) }()
	fh.log.WaitForRecord(t, slog.LevelDebug, "no entry changed", "config", path) // the check when the watch is set up
	return func() {
		t.Helper()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("WatchFile = %v", err)
		}
	}
}

// saveAsEditors writes src to path as editors (and mcpbridge add) do: a
// new file beside it, renamed over it.
func saveAsEditors(t *testing.T, path, src string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".swp")
	if err := os.WriteFile(tmp, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// waitRunning waits until the host runs want, for at most 30 s.
func (fh *fakeHost) waitRunning(t *testing.T, want map[string]int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cmp.Equal(want, fh.kind.running()) {
		if time.Now().After(deadline) {
			t.Fatalf("running %v, want %v; log:\n%s", fh.kind.running(), want, strings.Join(fh.log.Lines(), "\n"))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A change whose new config did not start keeps the previous config
// running; saving the file again (the cause fixed elsewhere: a binary
// installed, a server up) tries it again, instead of "no entry changed".
func TestReloadRetriesAChangeThatDidNotStart(t *testing.T) {
	fh := newFakeHost(t, Options{})
	path := filepath.Join(t.TempDir(), "f.yaml")
	write := func(src string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	write(`- {id: a, name: fake, config: {value: "1"}}`)
	fh.reload(ctx, path, true)
	write(`- {id: a, name: fake, config: {value: "2", fail: "boom"}}`)
	fh.reload(ctx, path, true)
	if diff := cmp.Diff([]string{"start a/1", "start a/2", "close a/2"}, fh.kind.takeEvents()); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	fh.reload(ctx, path, true) // saved again, unchanged
	if diff := cmp.Diff([]string{"start a/2", "close a/2"}, fh.kind.takeEvents()); diff != "" {
		t.Errorf("saved again after a change that did not start (-want +got):\n%s", diff)
	}
}

// The check when the watch is set up catches an edit made since the
// first Apply, and only that: an entry that failed to start (a server
// with failOnStartupError) is not started again by it, since nothing was
// saved, nor is the file said to have changed; a save, unchanged, starts
// it again.
func TestWatchFileSetUpRetriesNoFailedEntry(t *testing.T) {
	fh := newFakeHost(t, Options{})
	path := filepath.Join(t.TempDir(), "f.yaml")
	const src = `- {id: a, name: fake, config: {value: "1", fail: "later"}}`
	saveAsEditors(t, path, src)
	plan, err := fh.opts.Catalog.Parse(path, []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := fh.Apply(context.Background(), plan); err == nil {
		t.Fatal("Apply of an entry that fails to start = nil")
	}
	fh.kind.takeEvents()
	applied := fh.log.CountRecords(slog.LevelInfo, "applied", "config", path)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fh.WatchFile(ctx, path) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("WatchFile = %v", err)
		}
	}()
	mcptest.Eventually(t, 30*time.Second, func() bool {
		return fh.log.HasRecord(slog.LevelDebug, "no entry changed", "config", path) ||
			fh.log.CountRecords(slog.LevelInfo, "applied", "config", path) > applied
	}, "the check when the watch is set up; the log:\n%s", strings.Join(fh.log.Lines(), "\n"))
	if events := fh.kind.takeEvents(); len(events) != 0 || fh.log.HasRecord(slog.LevelInfo, "config file changed, reloading", "config", path) {
		t.Errorf("setting the watch up restarted the failed entry (events %v); log:\n%s", events, strings.Join(fh.log.Lines(), "\n"))
	}

	saveAsEditors(t, path, src)
	fh.log.WaitForRecord(t, slog.LevelInfo, "failed earlier, restarting", "entry", "a")
}
