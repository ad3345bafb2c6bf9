package console

import (
	"fmt"
	"strings"

	"github.com/mcpbridge/mcpbridge/internal/termsafe"
)

// visible shows the invisible characters that reorder or hide text
// (termsafe.Hidden: bidi embeddings, overrides and isolates, directional
// marks, zero-width spaces) as a visible code such as ⟨U+202E⟩, so a
// description cannot make the page read other than what the server sent.
func visible(s string) string {
	if !strings.ContainsFunc(s, termsafe.Hidden) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if termsafe.Hidden(r) {
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
