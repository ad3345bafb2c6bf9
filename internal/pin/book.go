package pin

import (
	"sync"

	"github.com/mcpbridge/mcpbridge/tool"
)

// Book decides, for the servers of one run, which definitions may be
// published: those that match the lock when there is one; with none and
// in memory, those that match what each server offered first (trust on
// first use for a long-running serve); with neither, all. Safe for
// concurrent use: every server of a host checks against one Book.
type Book struct {
	mu     sync.Mutex
	lock   *Lock // from the lock file; nil without one
	memory *Lock // first sight per server; nil unless in memory
}

// NewBook returns the Book of lock. A nil lock with inMemory pins each
// server's first definitions for the life of the Book; a nil lock without
// it publishes everything.
func NewBook(lock *Lock, inMemory bool) *Book {
	b := &Book{}
	b.Load(lock, inMemory)
	return b
}

// Check returns, for each of defs (server's definitions now), why it may
// not be published: "" when it may, "not pinned" or "changed since
// pinned: description". In memory, a server's first definitions, and any
// definition first seen later, are pinned as they come.
func (b *Book) Check(server string, defs []Def) []string {
	why := make([]string, len(defs))
	if b == nil {
		return why
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lock == nil && b.memory == nil {
		return why
	}
	if b.lock != nil {
		for i, d := range defs {
			why[i] = b.lock.Check(server, d)
		}
		return why
	}
	if !b.memory.Has(server) {
		b.memory.Set(server, nil)
	}
	for i, d := range defs {
		why[i] = b.memory.Check(server, d)
		if why[i] == "not pinned" {
			b.memory.add(server, d)
			why[i] = ""
		}
	}
	return why
}

// Load makes b check against lock from now on (see NewBook), forgetting
// what it pinned in memory. Call it before the servers that use b start.
func (b *Book) Load(lock *Lock, inMemory bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lock, b.memory = lock, nil
	if lock == nil && inMemory {
		b.memory = NewLock()
	}
}

// CheckTools is Check for a server's tools, each named by its raw name; a
// tool whose definition cannot be pinned (a schema that is not JSON) is
// refused as such whenever the Book checks anything.
func (b *Book) CheckTools(server string, tools []tool.Tool) []string {
	return checkAll(b, server, tools, ToolDef)
}

// CheckPrompts is CheckTools for prompts.
func (b *Book) CheckPrompts(server string, prompts []tool.Prompt) []string {
	return checkAll(b, server, prompts, PromptDef)
}

func checkAll[T any](b *Book, server string, items []T, def func(T) (Def, error)) []string {
	why := make([]string, len(items))
	if !b.active() {
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
	for j, w := range b.Check(server, defs) {
		why[at[j]] = w
	}
	return why
}

// active reports whether b checks anything.
func (b *Book) active() bool {
	if b == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lock != nil || b.memory != nil
}
