package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/configsource"
	clientkind "github.com/mcpbridge/mcpbridge/internal/kinds/client"
	"github.com/mcpbridge/mcpbridge/internal/oauth"
	"github.com/mcpbridge/mcpbridge/internal/pin"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/mcpclient"
)

const pinHelp = `  SERVER...   pin only these servers (accepting their changes); the others' pins stay
  --diff      show what changed since pinned instead of writing; exit 1 when anything did,
              or when a server did not start (it cannot be compared)

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
		if bad, ok := errors.AsType[*pin.ReadError](err); ok {
			what, advice := e.lockTrouble(bad, f)
			return fmt.Errorf("%s, so nothing was started: %s:\n%w", what, advice, err)
		}
		ls = pin.NewSet() // no place for a lock (no state directory): nothing pinned on disk
	}
	e.locks = ls.Locks()
	e.pinBook().Load(ls.ByServer(), inMemory)
	e.pinBook().SetSource(sourceArgs(f))
	return nil
}

// routePins checks each server of plan (a reload's) against the lock of
// the file that now defines it, as that lock was read at the start: a
// server added to a pinned file is not pinned, so it is withheld.
func (e *env) routePins(plan *host.Plan) {
	for _, pe := range plan.Enabled() {
		if pe.Entry.Name == clientkind.Name && pe.Entry.File != "" {
			e.pinBook().Route(pe.Spec.Name, e.locks[pin.Beside(pe.Entry.File)])
		}
	}
}

// readLocks reads the locks of src (none for the embedded default).
func (e *env) readLocks(src *source, f *flags) (*pin.Set, error) {
	ls := pin.NewSet()
	if err := e.placeLocks(ls, src, f); err != nil {
		return nil, err
	}
	if err := ls.Read(); err != nil {
		return nil, err
	}
	return ls, nil
}

// placeLocks fills in where ls's locks are and which servers each pins:
// beside each config file, those its entries define; for --url, one per
// URL under the state directory.
func (e *env) placeLocks(ls *pin.Set, src *source, f *flags) error {
	if f.url == "" {
		configsource.PlaceLocks(ls, src.files, src.defines, src.plan)
		return nil
	}
	dir, err := oauth.StateDir(e.lookup)
	if err != nil {
		return err
	}
	configsource.PlaceURLLock(ls, dir, f.url, src.plan)
	return nil
}

// checkLock reads src's locks, for their errors alone.
func checkLock(e *env, src *source, f *flags) error {
	_, err := e.readLocks(src, f)
	if bad, ok := errors.AsType[*pin.ReadError](err); ok {
		_, advice := e.lockTrouble(bad, f)
		return fmt.Errorf("%w\n(%s)", err, advice)
	}
	return nil
}

// unread reports whether the lock bad could not be opened or read, as
// opposed to read and not trusted.
func unread(bad *pin.ReadError) bool { return errors.As(bad.Err, new(*fs.PathError)) }

// lockTrouble is what is wrong with the lock bad and how to get past it.
// A lock that could not be opened or read is no lock to undo an edit of:
// a --url lock's state directory, or the file's owner and mode, is what
// to fix. Otherwise the lock cannot be trusted, and pin does not write
// over it, so its pins are recorded again only once it is gone.
func (e *env) lockTrouble(bad *pin.ReadError, f *flags) (what, advice string) {
	if !unread(bad) {
		return "the lock cannot be trusted", "undo the edit, or delete " + shellQuote(bad.Path) + " and run mcpbridge pin" + sourceArgs(f) + " to record every definition again"
	}
	if dir, err := oauth.StateDir(e.lookup); err == nil && f.url != "" {
		return "the state directory " + dir + " cannot be used", "make it a directory you can read and write, or set XDG_STATE_HOME to one"
	}
	return "the lock " + bad.Path + " cannot be read", "check its owner and mode (ls -l " + shellQuote(bad.Path) + ")"
}

// notePinned tells, as cmd, that the server name just added to the config
// file at path is withheld whole when that file has a lock: the lock holds
// none of its definitions, and nothing else would say so before a run.
func (e *env) notePinned(cmd, path, name string, f *flags) {
	lock := pin.Beside(path)
	if _, err := os.Stat(lock); err != nil {
		return
	}
	fmt.Fprintf(e.Stderr, "mcpbridge: %s: %s is pinned (%s): the tools and prompts of %q are withheld until you accept them with mcpbridge pin %s%s\n",
		cmd, path, lock, name, shellQuote(name), sourceArgs(&flags{config: f.config})) // add's --url is the server's
}

// reportPinNotes prints, on stderr, what pinNotes says. It returns how
// many definitions are withheld: tools and status fail while any is.
func (e *env) reportPinNotes(b *bridge) int {
	lines, held := e.pinNotes(b)
	for _, l := range lines {
		fmt.Fprintf(e.Stderr, "mcpbridge: %s\n", l)
	}
	return held
}

// pinNotes is each definition a server withheld (or published with pin:
// warn) and why, then, when any is withheld, how many and how to review
// and accept them, with the run's SOURCE (the Book's); escaped for a
// terminal. held is how many are withheld.
func (e *env) pinNotes(b *bridge) (lines []string, held int) {
	source := e.pinBook().Source()
	var servers []string
	for _, st := range b.statuses {
		for _, n := range st.PinNotes {
			lines = append(lines, fmt.Sprintf("server %q: %s", st.Name, termsafe.Line(n)))
			if strings.HasPrefix(n, "withheld ") { // host.Status.PinNotes
				held++
				servers = append(servers, st.Name)
			}
		}
	}
	if held > 0 {
		servers = slices.Compact(servers)
		lines = append(lines, fmt.Sprintf("%d %s withheld (pin: hold): review with mcpbridge pin --diff%s, accept with mcpbridge pin %s%s",
			held, plural(held, "definition", "definitions"), termsafe.Line(source), termsafe.Line(strings.Join(servers, " ")), termsafe.Line(source)))
	}
	return lines, held
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
	if bad, ok := errors.AsType[*pin.ReadError](err); ok {
		what, advice := e.lockTrouble(bad, f)
		if !unread(bad) {
			what += ", and pin does not write over it"
		}
		return fmt.Errorf("pin: %s: %s:\n%w", what, advice, err)
	}
	if err != nil {
		return fmt.Errorf("pin: %w", err)
	}
	if len(ls.Paths()) == 0 {
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
		return e.pinDiff(ls, now, b.failed)
	}
	return e.pinWrite(ls, now, len(f.args) == 0 && len(b.failed) == 0, len(b.failed) > 0)
}

// narrowTo keeps of src the servers named (all when none is), each of
// which must be an enabled entry (hasServer says which are, or the one
// meant).
func narrowTo(src *source, servers []string) (*source, error) {
	if len(servers) == 0 {
		return src, nil
	}
	for _, s := range servers {
		if err := hasServer("pin", src, s); err != nil {
			return nil, err
		}
	}
	plan, _ := configsource.Servers(src.plan, servers)
	out := *src
	out.plan = plan
	return &out, nil
}

// currentDefs are the definitions of every ready server, by server.
func currentDefs(b *bridge) (map[string][]pin.Def, error) {
	var servers []string
	for _, st := range b.statuses {
		if st.State == host.StateReady && st.Plugin == clientkind.Name {
			servers = append(servers, st.Name)
		}
	}
	return pin.Current(b.reg, servers)
}

// pinWrite records now's servers, each in its own lock (pin.Set.Record),
// saying what it pinned and wrote. With prune (every server pinned, none
// failed), a lock forgets the servers its config file no longer defines.
func (e *env) pinWrite(ls *pin.Set, now map[string][]pin.Def, prune, failed bool) error {
	err := ls.Record(now, prune, func(server string, tools, prompts int) {
		fmt.Fprintf(e.Stderr, "pinned %d %s and %d %s of %s\n", tools, plural(tools, "tool", "tools"), prompts, plural(prompts, "prompt", "prompts"), server)
	}, func(path string) { fmt.Fprintf(e.Stderr, "wrote %s\n", path) })
	if err != nil {
		return fmt.Errorf("pin: %w", err)
	}
	if failed {
		return &exitError{ExitFailed} // their pins were kept as they were
	}
	return nil
}

// pinDiff prints what differs between the lock and now, server by server;
// exit status 1 when anything does, or when a server failed: what it
// defines now is unknown, so "no changes" cannot be said.
func (e *env) pinDiff(ls *pin.Set, now map[string][]pin.Def, failed []host.Status) error {
	lines := ls.Diff(now)
	for _, line := range lines {
		fmt.Fprintln(e.Stdout, termsafe.Line(line))
	}
	if len(failed) > 0 {
		for _, st := range failed {
			fmt.Fprintf(e.Stderr, "mcpbridge: pin --diff: server %q not compared: it did not start\n", st.Name)
		}
		return &exitError{ExitFailed}
	}
	if len(lines) == 0 {
		fmt.Fprintln(e.Stderr, "no changes since pinned")
		return nil
	}
	return &exitError{ExitFailed}
}

// reloadPlan is serve's reading of its files at a reload (readFiles, as
// at the start, on the files read then); its servers are checked against
// their files' locks (routePins). The source read becomes the last.
func (e *env) reloadPlan(last *lastSource, cat *host.Catalog) (*host.Plan, error) {
	last.mu.Lock()
	defer last.mu.Unlock()
	src, err := e.readFiles(cat, last.src.files, last.src)
	if err != nil {
		return nil, err
	}
	e.routePins(src.plan)
	last.src = src
	return src.plan, nil
}

// lastSource is serve's config as last read: by Load, then by each
// reload. Two files' watchers may reload at once, hence mu.
type lastSource struct {
	mu  sync.Mutex
	src *source
}

// files are the paths of the files serve reads.
func (last *lastSource) files() []string {
	last.mu.Lock()
	defer last.mu.Unlock()
	return configsource.Paths(last.src.files)
}
