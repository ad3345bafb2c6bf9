package pin

import "sync"

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
