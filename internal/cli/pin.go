package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpbridge/mcpbridge/host"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
	"github.com/mcpbridge/mcpbridge/internal/oauth"
	"github.com/mcpbridge/mcpbridge/internal/pin"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/mcpclient"
)

const pinHelp = `  SERVER...   pin only these servers (accepting their changes); the others' pins stay
  --diff      show what changed since pinned instead of writing; exit 1 when anything did

Each server is pinned in the lock beside the config file that defines it: a user server in
$XDG_CONFIG_HOME/mcpbridge/mcpbridge.lock, a project's in the project's mcpbridge.lock (for
--url: under $XDG_STATE_HOME/mcpbridge/locks), so its pins hold in any directory. The lock
holds each definition's canonical JSON and SHA-256. While a server's lock exists, a
definition that differs from its pin, or is not in the lock, is withheld: not listed, not
callable (a call says why and to run mcpbridge pin SERVER), not served; tools and status
say which, how many, and exit 1. Per entry, pin: hold (default) | warn (publish, report) |
off. Without a lock, serve pins the first definitions it sees in memory and withholds later
changes until restarted.
`

var _ mcpclient.Pins = (*pin.Book)(nil)

// pinBook returns the Book every server of this run checks against.
func (e *env) pinBook() *pin.Book {
	if e.pins == nil {
		e.pins = pin.NewBook(nil, false)
	}
	return e.pins
}

// loadPins prepares the run's Book for src, unless the run is the pin
// command's, which must see every definition.
func (e *env) loadPins(src *source, f *flags, inMemory bool) error {
	if e.pinning {
		e.pinBook().Load(nil, false)
		return nil
	}
	return e.usePins(src, f, inMemory)
}

// usePins loads src's locks into the run's Book, each server checked
// against the lock of the file that defines it; a server whose file has no
// lock is pinned in memory with inMemory (serve). A corrupt lock stops the
// command: starting without it would unpin its servers silently.
func (e *env) usePins(src *source, f *flags, inMemory bool) error {
	ls, err := e.readLocks(src, f)
	if err != nil {
		if _, bad := errors.AsType[*lockReadError](err); bad {
			return fmt.Errorf("the lock cannot be trusted, so nothing was started (fix it, or delete it and run mcpbridge pin):\n%w", err)
		}
		ls = &lockSet{} // no place for a lock (no state directory): nothing pinned on disk
	}
	byServer := map[string]*pin.Lock{}
	for server := range ls.where {
		if l := ls.lockOf(server); l != nil {
			byServer[server] = l
		}
	}
	e.locks = ls.locks
	e.pinBook().Load(byServer, inMemory)
	return nil
}

// routePins checks each server of plan (a reload's) against the lock of
// the file that now defines it, as that lock was read at the start: a
// server added to a pinned file is not pinned, so it is withheld.
func (e *env) routePins(plan *host.Plan) {
	for _, pe := range plan.Enabled() {
		if pe.Entry.Name == clientkind.Name && pe.Entry.File != "" {
			e.pinBook().Route(pe.Spec.Name, e.locks[lockBeside(pe.Entry.File)])
		}
	}
}

// lockSet is the locks of a source: one beside each config file (for
// --url, one under the state directory), each pinning the servers its
// file defines, so that a server keeps its pins wherever the bridge runs.
type lockSet struct {
	paths []string             // every lock's path, in the order of the config files
	locks map[string]*pin.Lock // by path, as read; nil where there is none yet
	where map[string]string    // by server: the path of its lock
	keeps map[string][]string  // by path: the servers whose pins the lock keeps
}

// lockReadError is a lock that exists but cannot be read or trusted.
type lockReadError struct{ err error }

func (e *lockReadError) Error() string { return e.err.Error() }
func (e *lockReadError) Unwrap() error { return e.err }

// lockOf is server's lock; nil when its file has none (or it has no file).
func (ls *lockSet) lockOf(server string) *pin.Lock { return ls.locks[ls.where[server]] }

// readLocks reads the locks of src (none for the embedded default).
func (e *env) readLocks(src *source, f *flags) (*lockSet, error) {
	ls := &lockSet{locks: map[string]*pin.Lock{}, where: map[string]string{}, keeps: map[string][]string{}}
	if err := e.placeLocks(ls, src, f); err != nil {
		return nil, err
	}
	for _, path := range ls.paths {
		l, err := pin.Read(path)
		if err != nil {
			return nil, &lockReadError{err}
		}
		ls.locks[path] = l
	}
	return ls, nil
}

// placeLocks fills in where ls's locks are and which servers each pins:
// beside each config file, those its entries define; for --url, one per
// URL under the state directory.
func (e *env) placeLocks(ls *lockSet, src *source, f *flags) error {
	if f.url != "" {
		path, err := e.urlLockPath(f.url)
		if err != nil {
			return err
		}
		ls.paths = []string{path}
		for _, pe := range src.plan.Enabled() {
			ls.where[pe.Spec.Name] = path
			ls.keeps[path] = append(ls.keeps[path], pe.Spec.Name)
		}
		return nil
	}
	for _, cf := range src.files {
		path := lockBeside(cf.path)
		if _, ok := ls.keeps[path]; !ok {
			ls.paths = append(ls.paths, path)
		}
		ls.keeps[path] = append(ls.keeps[path], src.defines[cf.path]...)
	}
	for _, pe := range src.plan.Enabled() {
		if _, ok := src.defines[pe.Entry.File]; ok && pe.Entry.Name == clientkind.Name {
			ls.where[pe.Spec.Name] = lockBeside(pe.Entry.File)
		}
	}
	return nil
}

// lockBeside is the lock of the config file at path.
func lockBeside(path string) string { return filepath.Join(filepath.Dir(path), pin.FileName) }

// urlLockPath is the lock of a --url source: under the state directory,
// one per URL.
func (e *env) urlLockPath(url string) (string, error) {
	dir, err := oauth.StateDir(e.lookup)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(url))
	return filepath.Join(dir, "locks", hex.EncodeToString(sum[:8])+".lock"), nil
}

// checkLock reads src's locks, for their errors alone.
func checkLock(e *env, src *source, f *flags) error {
	_, err := e.readLocks(src, f)
	if _, bad := errors.AsType[*lockReadError](err); bad {
		return err
	}
	return nil
}

// reportPinNotes prints, on stderr, each definition a server withheld (or
// published with pin: warn) and why, then how many are withheld and how to
// review and accept them. It returns that number: tools and status fail
// while any definition is withheld.
func (e *env) reportPinNotes(b *bridge) int {
	held := 0
	var servers []string
	for _, st := range b.statuses {
		for _, n := range st.PinNotes {
			fmt.Fprintf(e.Stderr, "mcpbridge: server %q: %s\n", st.Name, termsafe.Line(n))
			if strings.HasPrefix(n, "withheld ") { // host.Status.PinNotes
				held++
				servers = append(servers, st.Name)
			}
		}
	}
	if held > 0 {
		servers = slices.Compact(servers)
		fmt.Fprintf(e.Stderr, "mcpbridge: %d %s withheld (pin: hold): review with mcpbridge pin --diff, accept with mcpbridge pin %s\n",
			held, plural(held, "definition", "definitions"), termsafe.Line(strings.Join(servers, " ")))
	}
	return held
}

// withheld reports whether a server withholds the tool name (its call
// answers why; a "did you mean" would point elsewhere).
func withheld(b *bridge, name string) bool {
	_, ok := b.reg.Withheld(name)
	return ok
}

// pinCmd is `mcpbridge pin`: record, or with --diff compare, the servers'
// definitions, each server's in the lock beside the file that defines it.
func (e *env) pinCmd(ctx context.Context, argv []string) error {
	f, err := parseFlags("pin", specOf("pin"), argv)
	if err != nil {
		return err
	}
	src, err := e.loadSource(f, e.catalog(true))
	if err != nil {
		return err
	}
	ls, err := e.readLocks(src, f)
	if _, bad := errors.AsType[*lockReadError](err); bad {
		return fmt.Errorf("pin: the lock cannot be read; fix it, or delete it and run mcpbridge pin again:\n%w", err)
	}
	if err != nil {
		return fmt.Errorf("pin: %w", err)
	}
	if len(ls.paths) == 0 {
		return usagef("pin: the embedded default config has no lock; give a config file (--config) or --url")
	}
	src, err = narrowTo(src, f.args)
	if err != nil {
		return err
	}
	e.pinning = true // see every definition, whatever the lock says
	b, err := e.open(ctx, src, f)
	if err != nil {
		return err
	}
	defer b.close()
	e.reportFailures(b)
	now, err := currentDefs(b)
	if err != nil {
		return fmt.Errorf("pin: %w", err)
	}
	if f.diff {
		return e.pinDiff(ls, now)
	}
	return e.pinWrite(ls, now, len(f.args) == 0 && len(b.failed) == 0, len(b.failed) > 0)
}

// narrowTo keeps of src the servers named (all when none is), each of
// which must be an enabled entry.
func narrowTo(src *source, servers []string) (*source, error) {
	if len(servers) == 0 {
		return src, nil
	}
	var keep []host.PlanEntry
	for _, pe := range src.plan.Enabled() {
		if pe.Entry.Name != clientkind.Name || slices.Contains(servers, pe.Spec.Name) {
			keep = append(keep, pe)
		}
	}
	for _, s := range servers {
		if !slices.ContainsFunc(keep, func(pe host.PlanEntry) bool { return pe.Spec.Name == s && pe.Entry.Name == clientkind.Name }) {
			return nil, usagef("pin: no enabled server %q in %s", s, src.name)
		}
	}
	return src.withEntries(keep), nil
}

// currentDefs are the definitions of every ready server, by server.
func currentDefs(b *bridge) (map[string][]pin.Def, error) {
	out := map[string][]pin.Def{}
	for _, st := range b.statuses {
		if st.State == host.StateReady && st.Plugin == clientkind.Name {
			out[st.Name] = []pin.Def{}
		}
	}
	var errs []error
	add := func(server string, d pin.Def, err error) {
		if _, ok := out[server]; !ok {
			return
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("server %q: %s %s: %w", server, d.Kind, d.Name, err)) // untested: the bridge passes only valid JSON
			return
		}
		out[server] = append(out[server], d)
	}
	for _, t := range b.reg.List() {
		d, err := pin.ToolDef(t)
		add(t.Origin.Server, d, err)
	}
	for _, p := range b.reg.Prompts() {
		d, err := pin.PromptDef(p)
		add(p.Origin.Server, d, err)
	}
	return out, errors.Join(errs...)
}

// pinWrite records now's servers, each in its own lock (the other pins of
// a lock stay). With prune (every server pinned, none failed), a lock
// forgets the servers its config file no longer defines. A lock is written
// when it has servers to pin or already exists.
func (e *env) pinWrite(ls *lockSet, now map[string][]pin.Def, prune, failed bool) error {
	for _, path := range ls.paths {
		servers := ls.serversAt(path, now)
		lock := ls.locks[path]
		if len(servers) == 0 && (lock == nil || !prune) {
			continue
		}
		if lock == nil {
			lock = pin.NewLock()
		}
		if prune {
			maps.DeleteFunc(lock.Servers, func(s string, _ *pin.ServerPins) bool { return !slices.Contains(ls.keeps[path], s) })
		}
		for _, s := range servers {
			lock.Set(s, now[s])
			tools, prompts := countKinds(now[s])
			fmt.Fprintf(e.Stderr, "pinned %d tools and %d prompts of %s\n", tools, prompts, s)
		}
		if err := lock.Write(path); err != nil {
			return fmt.Errorf("pin: %w", err)
		}
		fmt.Fprintf(e.Stderr, "wrote %s\n", path)
	}
	if failed {
		return &exitError{ExitFailed} // their pins were kept as they were
	}
	return nil
}

// serversAt are the servers of now pinned in the lock at path, sorted.
func (ls *lockSet) serversAt(path string, now map[string][]pin.Def) []string {
	var out []string
	for s := range now {
		if ls.where[s] == path {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

func countKinds(defs []pin.Def) (tools, prompts int) {
	for _, d := range defs {
		if d.Kind == pin.KindPrompt {
			prompts++
		} else {
			tools++
		}
	}
	return tools, prompts
}

// pinDiff prints what differs between the lock and now, server by server;
// exit status 1 when anything does.
func (e *env) pinDiff(ls *lockSet, now map[string][]pin.Def) error {
	changed := false
	for _, s := range slices.Sorted(maps.Keys(now)) {
		lock := ls.lockOf(s)
		if lock == nil {
			lock = pin.NewLock()
		}
		for _, line := range pin.DiffLines(lock, s, now[s]) {
			fmt.Fprintln(e.Stdout, termsafe.Line(line))
			changed = true
		}
	}
	if !changed {
		fmt.Fprintln(e.Stderr, "no changes since pinned")
		return nil
	}
	return &exitError{ExitFailed}
}

// reloadPlan is serve's reading of its files at a reload; its servers are
// checked against their files' locks (routePins).
func (e *env) reloadPlan(f *flags, cat *host.Catalog) (*host.Plan, error) {
	plan, err := e.readScopes(e.configFiles(f), cat, true)
	if err == nil {
		e.routePins(plan)
	}
	return plan, err
}
