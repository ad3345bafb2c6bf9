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

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/oauth"
	"github.com/mcpbridge/mcpbridge/internal/pin"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/mcpclient"
	"github.com/mcpbridge/mcpbridge/mcpclient/clientkind"
)

const pinHelp = `  SERVER...   pin only these servers (accepting their changes); the others' pins stay
  --diff      show what changed since pinned instead of writing; exit 1 when anything did

The lock holds each definition's canonical JSON and SHA-256, beside the config file (for
--url: under $XDG_STATE_HOME/mcpbridge/locks). While a lock exists, a definition that
differs from its pin, or is not in the lock, is withheld: not listed, not callable, not
served; tools, call and status say which and why. Per entry, pin: hold (default) | warn
(publish, report) | off. Without a lock, serve pins the first definitions it sees in
memory and withholds later changes until restarted.
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

// usePins loads src's lock into the run's Book; without one, inMemory pins
// first sight (serve). A corrupt lock stops the command: starting without
// it would unpin everything silently.
func (e *env) usePins(src *source, f *flags, inMemory bool) error {
	path, err := e.lockPath(src, f)
	if err != nil || path == "" {
		e.pinBook().Load(nil, inMemory)
		return nil // no place for a lock: nothing pinned on disk
	}
	lock, err := pin.Read(path)
	if err != nil {
		return fmt.Errorf("the lock cannot be trusted, so nothing was started (fix it, or delete it and run mcpbridge pin):\n%w", err)
	}
	e.pinBook().Load(lock, inMemory)
	return nil
}

// lockPath is where src's lock lives: beside its config file; for --url
// under the state directory, one per URL; "" for the embedded default.
func (e *env) lockPath(src *source, f *flags) (string, error) {
	if file := src.mainFile(); file != "" {
		return filepath.Join(filepath.Dir(file), pin.FileName), nil
	}
	if f.url == "" {
		return "", nil
	}
	dir, err := oauth.StateDir(e.lookup)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(f.url))
	return filepath.Join(dir, "locks", hex.EncodeToString(sum[:8])+".lock"), nil
}

// checkLock reads src's lock, if it has one, for its errors alone.
func checkLock(e *env, src *source, f *flags) error {
	path, err := e.lockPath(src, f)
	if err != nil || path == "" {
		return nil
	}
	_, err = pin.Read(path)
	return err
}

// reportPinNotes prints, on stderr, each definition a server withheld (or
// published with pin: warn) and why.
func (e *env) reportPinNotes(b *bridge) {
	for _, st := range b.statuses {
		for _, n := range st.PinNotes {
			fmt.Fprintf(e.Stderr, "mcpbridge: server %q: %s\n", st.Name, termsafe.Line(n))
		}
	}
}

// pinCmd is `mcpbridge pin`: record, or with --diff compare, the servers'
// definitions.
func (e *env) pinCmd(ctx context.Context, argv []string) error {
	f, err := parseFlags("pin", specOf("pin"), argv)
	if err != nil {
		return err
	}
	src, err := e.loadSource(f, e.catalog(true))
	if err != nil {
		return err
	}
	path, err := e.lockPath(src, f)
	if err != nil {
		return fmt.Errorf("pin: %w", err)
	}
	if path == "" {
		return usagef("pin: the embedded default config has no lock; give a config file (--config) or --url")
	}
	old, err := pin.Read(path)
	if err != nil {
		return fmt.Errorf("pin: the lock cannot be read; fix it, or delete it and run mcpbridge pin again:\n%w", err)
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
		return e.pinDiff(old, now)
	}
	return e.pinWrite(path, old, now, src, len(f.args) == 0, len(b.failed) > 0)
}

// narrowTo keeps of src the servers named (all when none is), each of
// which must be an enabled entry.
func narrowTo(src *source, servers []string) (*source, error) {
	if len(servers) == 0 {
		return src, nil
	}
	var keep []host.PlanEntry
	for _, pe := range src.plan.Enabled() {
		if pe.Entry.Name != clientkind.PluginName || slices.Contains(servers, pe.Spec.Name) {
			keep = append(keep, pe)
		}
	}
	for _, s := range servers {
		if !slices.ContainsFunc(keep, func(pe host.PlanEntry) bool { return pe.Spec.Name == s && pe.Entry.Name == clientkind.PluginName }) {
			return nil, usagef("pin: no enabled server %q in %s", s, src.name)
		}
	}
	return &source{name: src.name, files: src.files, plan: &host.Plan{Source: src.plan.Source, Entries: keep}}, nil
}

// currentDefs are the definitions of every ready server, by server.
func currentDefs(b *bridge) (map[string][]pin.Def, error) {
	out := map[string][]pin.Def{}
	for _, st := range b.statuses {
		if st.State == host.StateReady && st.Plugin == clientkind.PluginName {
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

// pinWrite records now's servers in the lock at path (old's other
// servers stay; with all, the servers src no longer has go).
func (e *env) pinWrite(path string, old *pin.Lock, now map[string][]pin.Def, src *source, all, failed bool) error {
	lock := old
	if lock == nil {
		lock = pin.NewLock()
	}
	if all && !failed {
		for _, s := range slices.Collect(maps.Keys(lock.Servers)) {
			if !slices.ContainsFunc(src.plan.Entries, func(pe host.PlanEntry) bool { return pe.Spec.Name == s }) {
				delete(lock.Servers, s)
			}
		}
	}
	for _, s := range slices.Sorted(maps.Keys(now)) {
		lock.Set(s, now[s])
		tools, prompts := countKinds(now[s])
		fmt.Fprintf(e.Stderr, "pinned %d tools and %d prompts of %s\n", tools, prompts, s)
	}
	if err := lock.Write(path); err != nil {
		return fmt.Errorf("pin: %w", err)
	}
	fmt.Fprintf(e.Stderr, "wrote %s\n", path)
	if failed {
		return &exitError{ExitFailed} // their pins were kept as they were
	}
	return nil
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
func (e *env) pinDiff(lock *pin.Lock, now map[string][]pin.Def) error {
	if lock == nil {
		lock = pin.NewLock()
	}
	changed := false
	for _, s := range slices.Sorted(maps.Keys(now)) {
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
