package pin

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/mcpbridge/mcpbridge/tool"
)

// Set is the locks of a config: one beside each config file (or one per
// URL a server is reached by), each pinning the servers its file defines,
// so that a server keeps its pins wherever the bridge runs. Build it with
// Keep and Assign, then Read; it is not safe for concurrent use.
type Set struct {
	paths []string            // every lock's path, in the order kept
	locks map[string]*Lock    // by path, as read; nil where there is none yet
	where map[string]string   // by server: the path of its lock
	keeps map[string][]string // by path: the servers whose pins the lock keeps
}

// NewSet returns a Set of no locks.
func NewSet() *Set {
	return &Set{locks: map[string]*Lock{}, where: map[string]string{}, keeps: map[string][]string{}}
}

// Beside is the path of the lock of the config file at path.
func Beside(path string) string { return filepath.Join(filepath.Dir(path), FileName) }

// Keep adds the lock at path, which keeps the pins of servers (those its
// file defines, whether a later file replaces them or not): Record with
// prune forgets the others. Keeping a path again adds servers.
func (s *Set) Keep(path string, servers ...string) {
	if _, ok := s.keeps[path]; !ok {
		s.paths = append(s.paths, path)
	}
	s.keeps[path] = append(s.keeps[path], servers...)
}

// Assign says that server is checked against, and pinned in, the lock at
// path.
func (s *Set) Assign(server, path string) { s.where[server] = path }

// Paths are the locks' paths, in the order kept.
func (s *Set) Paths() []string { return slices.Clone(s.paths) }

// ReadError is a lock that exists but cannot be read or trusted.
type ReadError struct {
	Path string // the lock's
	Err  error
}

func (e *ReadError) Error() string { return e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// Read reads every lock (one not yet written is nil); a lock that cannot
// be read or trusted is a *ReadError.
func (s *Set) Read() error {
	for _, path := range s.paths {
		l, err := Read(path)
		if err != nil {
			return &ReadError{Path: path, Err: err}
		}
		s.locks[path] = l
	}
	return nil
}

// Locks are the locks as read, by path (nil where none is yet).
func (s *Set) Locks() map[string]*Lock { return maps.Clone(s.locks) }

// LockOf is server's lock; nil when its file has none (or it has no
// file).
func (s *Set) LockOf(server string) *Lock { return s.locks[s.where[server]] }

// ByServer is LockOf of every assigned server that has a lock: what a
// Book loads.
func (s *Set) ByServer() map[string]*Lock {
	out := map[string]*Lock{}
	for server := range s.where {
		if l := s.LockOf(server); l != nil {
			out[server] = l
		}
	}
	return out
}

// Record pins now's servers, each in its own lock (a lock's other pins
// stay), and writes each lock that has servers to pin or, with prune,
// already exists. With prune (every server pinned, none failed) a lock
// forgets the servers it does not keep. pinned is told of each server
// pinned, wrote of each lock written.
func (s *Set) Record(now map[string][]Def, prune bool, pinned func(server string, tools, prompts int), wrote func(path string)) error {
	for _, path := range s.paths {
		servers := s.serversAt(path, now)
		lock := s.locks[path]
		if len(servers) == 0 && (lock == nil || !prune) {
			continue
		}
		if lock == nil {
			lock = NewLock()
		}
		if prune {
			maps.DeleteFunc(lock.Servers, func(srv string, _ *ServerPins) bool { return !slices.Contains(s.keeps[path], srv) })
		}
		for _, srv := range servers {
			lock.Set(srv, now[srv])
			tools, prompts := Count(now[srv])
			pinned(srv, tools, prompts)
		}
		if err := lock.Write(path); err != nil {
			return err
		}
		wrote(path)
	}
	return nil
}

// serversAt are the servers of now pinned in the lock at path, sorted.
func (s *Set) serversAt(path string, now map[string][]Def) []string {
	var out []string
	for srv := range now {
		if s.where[srv] == path {
			out = append(out, srv)
		}
	}
	slices.Sort(out)
	return out
}

// Diff is what differs between each server's lock and now (DiffLines),
// server by server in name order; none when nothing does.
func (s *Set) Diff(now map[string][]Def) []string {
	var out []string
	for _, srv := range slices.Sorted(maps.Keys(now)) {
		lock := s.LockOf(srv)
		if lock == nil {
			lock = NewLock()
		}
		out = append(out, DiffLines(lock, srv, now[srv])...)
	}
	return out
}

// Count counts defs' tools and prompts.
func Count(defs []Def) (tools, prompts int) {
	for _, d := range defs {
		if d.Kind == KindPrompt {
			prompts++
		} else {
			tools++
		}
	}
	return tools, prompts
}

// Current are the definitions reg holds of each of servers (every one
// present, with none when reg has none of it): what Record pins and Diff
// compares.
func Current(reg *tool.Registry, servers []string) (map[string][]Def, error) {
	out := map[string][]Def{}
	for _, s := range servers {
		out[s] = []Def{}
	}
	var errs []error
	add := func(server string, d Def, err error) {
		if _, ok := out[server]; !ok {
			return
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("server %q: %s %s: %w", server, d.Kind, d.Name, err)) // an object that repeats a key
			return
		}
		out[server] = append(out[server], d)
	}
	for _, t := range reg.List() {
		d, err := ToolDef(t)
		add(t.Origin.Server, d, err)
	}
	for _, p := range reg.Prompts() {
		d, err := PromptDef(p)
		add(p.Origin.Server, d, err)
	}
	return out, errors.Join(errs...)
}
