package console

import (
	"fmt"
	"strings"
)

// visible shows the invisible characters that reorder or hide text (bidi
// embeddings, overrides and isolates, directional marks, zero-width
// characters) as a visible code such as ⟨U+202E⟩, so a description cannot
// make the page read other than what the server sent.
func visible(s string) string {
	if !strings.ContainsFunc(s, hidden) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if hidden(r) {
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func hidden(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || r == 0x200E || r == 0x200F ||
		r == 0x061C || (r >= 0x200B && r <= 0x200D) || r == 0x2060 || r == 0xFEFF
}
