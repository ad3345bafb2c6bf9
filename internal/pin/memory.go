package pin

import (
	"container/list"
	"crypto/sha256"
	"fmt"
)

// maxWithdrawn bounds the withdrawn definitions a Book in memory
// remembers of one server (a few hundred bytes each): a server that
// renames its tools at every sync would otherwise grow it without end.
const maxWithdrawn = 4096

// forgotten is why a name not pinned is withheld once a server withdrew
// more definitions than are remembered.
var forgotten = fmt.Sprintf("not pinned: more than %d of this server's definitions were withdrawn since serve started, "+
	"and a name not pinned may be one of those forgotten (restart serve to pin it)", maxWithdrawn)

// memPins are the pins of one server without a lock, held in memory: in
// full, those of the definitions it offers; by hash, up to maxWithdrawn of
// those it withdrew, the latest, so that one offered again is checked.
type memPins struct {
	offered   *ServerPins
	withdrawn map[[sha256.Size]byte]*list.Element // by key of kind and name
	order     list.List                           // of *gone, the oldest first
	forgot    bool                                // a withdrawn pin was dropped
}

// gone is a withdrawn pin: its key and its definition's hash.
type gone struct {
	key    [sha256.Size]byte
	sha256 string
}

func newMemPins() *memPins {
	return &memPins{offered: newServerPins(), withdrawn: map[[sha256.Size]byte]*list.Element{}}
}

// key names a definition by a fixed-size hash: a withdrawn name, however
// long, costs the same.
func key(kind Kind, name string) [sha256.Size]byte {
	return sha256.Sum256([]byte(string(kind) + "\x00" + name))
}

// check returns why each of defs, all of the server's definitions of kind
// now, may not be published, pinning those seen first; the pins of kind
// that defs do not name are withdrawn.
func (m *memPins) check(kind Kind, defs []Def) []string {
	why := make([]string, len(defs))
	pins := m.offered.of(kind)
	named := map[string]bool{}
	for i, d := range defs {
		named[d.Name] = true
		m.restore(pins, d)
		switch p, ok := pins[d.Name]; {
		case ok:
			why[i] = p.check(d)
			if why[i] == "" && p.Definition == nil {
				pins[d.Name] = pinOf(d)
			}
		case m.forgot:
			why[i] = forgotten
		default:
			pins[d.Name] = pinOf(d)
		}
	}
	for name, p := range pins {
		if !named[name] {
			delete(pins, name)
			m.withdraw(key(kind, name), p.SHA256)
		}
	}
	return why
}

// restore moves d's withdrawn pin, if any, back among the offered, by hash
// alone: a change is caught, though not which field.
func (m *memPins) restore(pins map[string]Pin, d Def) {
	k := key(d.Kind, d.Name)
	if e, ok := m.withdrawn[k]; ok {
		pins[d.Name] = Pin{SHA256: m.order.Remove(e).(*gone).sha256}
		delete(m.withdrawn, k)
	}
}

// withdraw remembers a pin no longer offered, forgetting the oldest past
// maxWithdrawn.
func (m *memPins) withdraw(k [sha256.Size]byte, sha string) {
	m.withdrawn[k] = m.order.PushBack(&gone{key: k, sha256: sha})
	if m.order.Len() > maxWithdrawn {
		delete(m.withdrawn, m.order.Remove(m.order.Front()).(*gone).key)
		m.forgot = true
	}
}
