package host

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Digest identifies the config the host applies now: each entry of the
// running plan, in order (a refused change counts as the config that
// kept running), by its id, its kind, whether it is disabled, and its
// config as written. Variables count unexpanded, so hosts given one file
// with values that differ per host (an advertised address) agree; and
// comments, formatting, quoting and key order do not count, so two
// files written alike agree. "" before the first Apply.
func (h *Host) Digest() string {
	h.mu.Lock()
	var b strings.Builder
	for _, u := range h.units {
		e := u.pe.Entry
		fmt.Fprintf(&b, "%q %q %t ", e.ID, e.Name, e.Disabled)
		writeNode(&b, e.Config)
		b.WriteByte('\n')
	}
	applied := h.version > 0
	h.mu.Unlock()
	if !applied {
		return ""
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}

// writeNode writes n to b in a canonical form: its values and their
// resolved tags, mappings sorted by key, aliases as what they name.
func writeNode(b *strings.Builder, n *yaml.Node) {
	if n == nil {
		b.WriteString("~")
		return
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			writeNode(b, c)
		}
	case yaml.AliasNode:
		writeNode(b, n.Alias)
	case yaml.SequenceNode:
		b.WriteString("[")
		for _, c := range n.Content {
			writeNode(b, c)
			b.WriteString(",")
		}
		b.WriteString("]")
	case yaml.MappingNode:
		b.WriteString("{" + strings.Join(mappingPairs(n), ",") + "}")
	default:
		fmt.Fprintf(b, "%s%q", n.ShortTag(), n.Value)
	}
}

// mappingPairs are the pairs of the mapping n, each written canonically,
// sorted: the order keys are written in is no difference.
func mappingPairs(n *yaml.Node) []string {
	pairs := make([]string, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		var p strings.Builder
		writeNode(&p, n.Content[i])
		p.WriteString(":")
		writeNode(&p, n.Content[i+1])
		pairs = append(pairs, p.String())
	}
	slices.Sort(pairs)
	return pairs
}
