package host

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/mcpbridge/mcpbridge/confpos"
)

// DefaultDebounce is how long WatchFile waits after the last change of the
// file before it reloads (upstream's HMR default): an editor's save, or a
// burst of writes, becomes one reload.
const DefaultDebounce = 100 * time.Millisecond

// WatchFile keeps the host in line with the composition file at path until
// ctx ends or Close is called (then it returns nil). Call it after the
// first Apply of that file, usually on its own goroutine.
//
// It watches the file's directory, not the file: editors save by writing a
// new file and renaming it over the old one, which would end a watch on the
// file itself. It uses the operating system's notifications (fsnotify:
// inotify, kqueue, ReadDirectoryChangesW) rather than polling, so a change
// is seen at once, an idle host reads nothing, and the debounce, not a poll
// interval, decides when a burst of writes is over.
//
// Debounce after the last change (and once when the watch is set up, so an
// edit made since the first read is not lost), it re-reads (ReadConfigFile:
// a file over MaxConfigBytes is refused) and parses the file
// (Catalog.Parse, with Options.Lookup) and, when some entry differs
// from the plan last applied, Apply's it; after a change (not the read
// when the watch is set up, which is no save) it also Apply's it when an
// entry failed for good, to start that entry again. A file that does not
// parse or validate changes nothing: each problem is logged with
// file:line. A deleted file keeps every entry running, with a warning,
// until it comes back. WatchFile returns an error only when the watch
// cannot be set up.
func (h *Host) WatchFile(ctx context.Context, path string) error {
	if h.ctx.Err() != nil {
		return ErrClosed
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching %s: %w", path, err) // untested: needs an exhausted inotify limit
	}
	defer w.Close()
	dir := filepath.Dir(path)
	if err := w.Add(dir); err != nil {
		return fmt.Errorf("watching %s: its directory %s: %w", path, dir, err)
	}
	watchTarget(w, path)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(h.ctx, cancel)()
	h.watchLoop(ctx, w.Events, w.Errors, path, func(saved bool) {
		watchTarget(w, path) // a link pointed elsewhere since
		h.reload(ctx, path, saved)
	})
	return nil
}

// watchTarget watches the directory of the file path leads to as well,
// when path is a symbolic link into another directory (a config kept in
// a dotfiles repository): an edit there, mcpbridge add's included,
// names no file of path's directory. Best effort: the link's own
// directory is watched whatever happens here.
func watchTarget(w *fsnotify.Watcher, path string) {
	if target, err := filepath.EvalSymlinks(path); err == nil && filepath.Dir(target) != filepath.Dir(filepath.Clean(path)) {
		w.Add(filepath.Dir(target)) // adding a directory watched already does nothing
	}
}

// watchLoop calls reload once debounce after the last event about path (and
// once at the start), until ctx ends or events closes; saved says whether
// an event (or an overflow, which may have dropped one) came since the
// last reload. Only this goroutine touches the timer. Reloads run on this goroutine, so they never overlap;
// events that arrive meanwhile are buffered by the watcher and lead to one
// more reload.
//
// An event about another name of the directory counts when it changed
// where path leads: a Kubernetes ConfigMap volume updates its files by
// swapping a symlink (path -> ..data/file, ..data -> ..<timestamp>), and no
// event names path itself. An event naming the file path leads to counts
// too (a linked config edited where it lives).
func (h *Host) watchLoop(ctx context.Context, events <-chan fsnotify.Event, errs <-chan error, path string, reload func(saved bool)) {
	name := filepath.Clean(path)
	target, _ := filepath.EvalSymlinks(name)
	timer := time.NewTimer(h.opts.Debounce)
	defer timer.Stop()
	fire := timer.C
	saved := false
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			now, _ := filepath.EvalSymlinks(name)
			if evName := filepath.Clean(ev.Name); evName == name || evName == target || now != target {
				target = now
				timer.Reset(h.opts.Debounce)
				fire, saved = timer.C, true
			}
		case err, ok := <-errs:
			if !ok {
				return
			}
			h.log.Warn("watching the config file failed", "config", path, "err", err)
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// The kernel dropped events, the file's among them maybe:
				// read it again, as for a change.
				timer.Reset(h.opts.Debounce)
				fire, saved = timer.C, true
			}
		case <-fire:
			reload(saved)
			fire, saved = nil, false
		}
	}
}

// notReloaded is the message of a reload that failed before Apply: the
// file could not be read, or a problem in it (one record per problem).
const notReloaded = "config not reloaded, the running entries are unchanged"

// reload re-reads path and applies it when it differs from the plan last
// applied or, when it was saved, when an entry failed for good (saving is
// how a user retries one). Failures are logged; the running entries stay
// as they are.
func (h *Host) reload(ctx context.Context, path string, saved bool) {
	data, err := ReadConfigFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		h.mu.Lock()
		n := 0
		for _, u := range h.units {
			if u.inst != nil {
				n++
			}
		}
		h.mu.Unlock()
		h.log.Warn("config file deleted; keeping the running entries as they are — restore the file to reload it", "config", path, "running", n)
		return
	case err != nil:
		h.log.Error(notReloaded, "config", path, "err", err)
		h.noteFileRefusal(err)
		return
	}
	parse := h.opts.Parse
	if parse == nil {
		parse = func(path string, data []byte) (*Plan, error) {
			return h.opts.Catalog.ParseIsolated(path, data, h.opts.Lookup)
		}
	}
	plan, err := parse(path, data)
	if err != nil {
		for _, e := range split(err) {
			attrs := []any{"config", path, "err", e}
			if ce, ok := errors.AsType[*confpos.Error](e); ok && ce.EntryID != "" {
				attrs = append(attrs, "entry", ce.EntryID)
			}
			h.log.Error(notReloaded, attrs...)
		}
		h.noteFileRefusal(err)
		return
	}
	h.noteFileRefusal(nil)
	h.mu.Lock()
	same := planKey(plan) == h.planKey
	h.mu.Unlock()
	if same && (!saved || !h.anyBroken()) {
		h.log.Debug("no entry changed", "config", path)
		return
	}
	h.log.Info("config file changed, reloading", "config", path)
	// Start failures are logged by Apply; what ran before keeps running.
	_ = h.Apply(ctx, plan)
}

// noteFileRefusal records err as why the last reload could not read or
// parse the config on disk (FileRefusal), nil when it could. The same
// reason again keeps its Since: the file has been refused since then.
func (h *Host) noteFileRefusal(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil {
		h.fileRefused = nil
		return
	}
	problems := make([]string, 0, 1)
	for _, e := range split(err) {
		problems = append(problems, e.Error())
	}
	ref := &Refusal{Err: strings.Join(problems, "; ") + " (" + notReloaded + ")", Since: time.Now()}
	if old := h.fileRefused; old != nil && old.Err == ref.Err {
		ref.Since = old.Since
	}
	h.fileRefused = ref
}

// FileRefusal is why the last reload of WatchFile could not read or parse
// the config file, every entry running as it was; nil when it could (an
// entry it refused is that entry's Status.Refused).
func (h *Host) FileRefusal() *Refusal {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fileRefused == nil {
		return nil
	}
	ref := *h.fileRefused
	return &ref
}

// planKey identifies what a plan asks for: each entry's id, state and
// fingerprint, in order. Comments and formatting do not change it.
func planKey(plan *Plan) string {
	var b strings.Builder
	b.WriteString(plan.Source)
	for _, pe := range plan.Entries {
		fmt.Fprintf(&b, "\n%s %t", pe.Entry.ID, pe.Entry.Disabled)
		if pe.Err != nil {
			b.WriteString(" invalid " + pe.Err.Error())
		} else if !pe.Entry.Disabled {
			b.WriteString(" " + fingerprint(pe.Entry.Name, pe.Spec.Config))
		}
	}
	return b.String()
}
