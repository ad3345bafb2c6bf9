package pin

import (
	"maps"
	"sync"

	"github.com/mcpbridge/mcpbridge/tool"
)

// Book decides, for the servers of one run, which definitions may be
// published. Each server is checked against the lock of the file that
// defines it (a user entry against the user lock, a project entry against
// the project's), so that a server keeps its pins in whichever directory
// the bridge runs: those that match its lock when there is one; with none
// and in memory, those that match what the server offered first (trust on
// first use for a long-running serve); with neither, all. Safe for
// concurrent use: every server of a host checks against one Book.
//
// In memory, a server's pins are those of the definitions it offers now,
// in full, and of up to maxWithdrawn it withdrew, by hash: a definition
// that stays, or comes back, is checked against its first sight, and a
// server that renames its tools at every sync does not grow the Book
// without end. Once a withdrawn pin had to be forgotten, a name not
// pinned is withheld: it may be the forgotten one, changed.
type Book struct {
	mu     sync.Mutex
	locks  map[string]*Lock    // by server; a server without one has no lock file
	memory map[string]*memPins // by server without a lock; nil unless in memory
	source string              // SetSource's
}

// NewBook returns the Book of locks, each server's lock by its name (the
// lock of the file that defines it; servers of one file share one). A
// server with no lock is pinned in memory, its first definitions for the
// life of the Book, with inMemory, and not checked without it.
func NewBook(locks map[string]*Lock, inMemory bool) *Book {
	b := &Book{}
	b.Load(locks, inMemory)
	return b
}

// Check returns, for each of defs (all of server's definitions now, tools
// and prompts), why it may not be published: "" when it may, "not pinned"
// or "changed since pinned: description". In memory, a server's first
// definitions, and any definition first seen later, are pinned as they
// come, and a pinned one not among defs is withdrawn.
func (b *Book) Check(server string, defs []Def) []string {
	return b.check(server, []Kind{KindTool, KindPrompt}, defs)
}

// check is Check of defs, all of server's definitions of kinds now.
func (b *Book) check(server string, kinds []Kind, defs []Def) []string {
	why := make([]string, len(defs))
	if b == nil {
		return why
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if lock := b.locks[server]; lock != nil {
		for i, d := range defs {
			why[i] = lock.Check(server, d)
		}
		return why
	}
	if b.memory == nil {
		return why
	}
	m := b.memory[server]
	if m == nil {
		m = newMemPins()
		b.memory[server] = m
	}
	for _, kind := range kinds {
		var of []Def
		var at []int
		for i, d := range defs {
			if d.Kind == kind {
				of, at = append(of, d), append(at, i)
			}
		}
		for j, w := range m.check(kind, of) {
			why[at[j]] = w
		}
	}
	return why
}

// Load makes b check against locks from now on (see NewBook), forgetting
// what it pinned in memory. Call it before the servers that use b start.
func (b *Book) Load(locks map[string]*Lock, inMemory bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.locks, b.memory = maps.Clone(locks), nil
	if inMemory {
		b.memory = map[string]*memPins{}
	}
}

// Route checks server against lock from now on (nil: the server has no
// lock), keeping what b pinned in memory: for a server that a reload adds
// or moves to another file.
func (b *Book) Route(server string, lock *Lock) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if lock == nil {
		delete(b.locks, server)
		return
	}
	if b.locks == nil {
		b.locks = map[string]*Lock{}
	}
	b.locks[server] = lock
}

// Advice says how the user accepts server's definitions as they are now,
// once they have read what changed: the end of the answer to a call of a
// withheld tool.
func (b *Book) Advice(server string) string {
	again := server + b.Source()
	return "if the change is expected, review it with mcpbridge pin --diff " + again + ", then accept it with mcpbridge pin " + again
}

// SetSource sets the SOURCE arguments (" --config FILE", each with its
// leading space) that the commands of Advice carry: without them a pin
// would read another config than the one whose servers were checked.
func (b *Book) SetSource(args string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.source = args
}

// Source is what SetSource set.
func (b *Book) Source() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.source
}

// CheckTools is Check for a server's tools, each named by its raw name; a
// tool whose definition cannot be pinned (a schema that is not JSON) is
// refused as such whenever the Book checks the server.
func (b *Book) CheckTools(server string, tools []tool.Tool) []string {
	return checkAll(b, server, KindTool, tools, ToolDef)
}

// CheckPrompts is CheckTools for prompts.
func (b *Book) CheckPrompts(server string, prompts []tool.Prompt) []string {
	return checkAll(b, server, KindPrompt, prompts, PromptDef)
}

// checkAll checks items, all of server's definitions of kind now.
func checkAll[T any](b *Book, server string, kind Kind, items []T, def func(T) (Def, error)) []string {
	why := make([]string, len(items))
	if !b.checks(server) {
		return why
	}
	var defs []Def
	var at []int
	for i, it := range items {
		d, err := def(it)
		if err != nil {
			why[i] = "cannot be pinned: " + err.Error()
			continue
		}
		defs, at = append(defs, d), append(at, i)
	}
	for j, w := range b.check(server, []Kind{kind}, defs) {
		why[at[j]] = w
	}
	return why
}

// checks reports whether b checks server's definitions.
func (b *Book) checks(server string) bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.locks[server] != nil || b.memory != nil
}
