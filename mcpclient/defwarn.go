package mcpclient

import (
	"fmt"
	"hash/maphash"
	"sync"
)

// defWarnings holds, by list, a hash of each warning the last sync of
// that list logged about the server's definitions (a tool ignored, its
// icons dropped, its description cut), so that the next sync logs only
// the new ones, as the definition scan does (scanMemo): a server that
// changes a list every few seconds, or reconnects, would otherwise log
// the same lines about definitions that did not change, each time.
type defWarnings struct {
	mu   sync.Mutex
	seed maphash.Seed
	last map[listKind]map[uint64]bool // the last sync's, by list
	cur  map[listKind]map[uint64]bool // the sync's under way
}

// warnDef logs a warning about a definition of the list kind unless the
// last sync of that list logged it already, or this one did.
func (s *Server) warnDef(kind listKind, msg string, args ...any) {
	if s.warned.fresh(kind, msg, args) {
		s.log.Warn(msg, args...)
	}
}

// fresh records the warning and reports whether to log it.
func (w *defWarnings) fresh(kind listKind, msg string, args []any) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cur == nil {
		w.seed, w.last, w.cur = maphash.MakeSeed(), map[listKind]map[uint64]bool{}, map[listKind]map[uint64]bool{}
	}
	var h maphash.Hash
	h.SetSeed(w.seed)
	h.WriteString(msg)
	for _, a := range args {
		h.WriteByte(0)
		fmt.Fprint(&h, a)
	}
	sum := h.Sum64()
	if w.cur[kind] == nil {
		w.cur[kind] = map[uint64]bool{}
	}
	if w.cur[kind][sum] {
		return false
	}
	w.cur[kind][sum] = true
	return !w.last[kind][sum]
}

// begin starts a sync of kinds: what an earlier one left unfinished is
// forgotten.
func (w *defWarnings) begin(kinds listKind) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.cur {
		if kinds&k != 0 {
			delete(w.cur, k)
		}
	}
}

// synced ends a sync of kinds that fetched them: its warnings are what
// the next one compares with.
func (w *defWarnings) synced(kinds listKind) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range []listKind{kindTools, kindResources, kindPrompts} {
		if kinds&k != 0 && w.last != nil {
			w.last[k] = w.cur[k]
			delete(w.cur, k)
		}
	}
}
