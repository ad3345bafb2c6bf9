// Package termsafe makes text that came from outside the bridge (an MCP
// server's names, descriptions, results and errors, a child's stderr) safe
// to show on a terminal. Control characters in such text are instructions
// to the terminal: ESC sequences retitle the window, clear the screen, move
// the cursor or forge earlier lines, and a stray newline breaks a table.
// Line and Text show each of them escaped instead, so the reader sees what
// the server sent and the terminal obeys none of it.
//
// Only human output needs this: JSON output carries the same text as JSON
// strings, which escape control characters already.
package termsafe

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpbridge/mcpbridge/internal/invisible"
)

// Line returns s for one line of output (a table cell, a name, an error
// message, a log line): every C0 control character (U+0000–U+001F,
// newline and tab included), DEL (U+007F), C1 control character
// (U+0080–U+009F), character that reorders or hides text (Hidden) and
// byte of invalid UTF-8 is replaced by a visible escape: \n, \r, \t,
// \x1b, \u009b, \u202e, \U000e0041, \xff. Everything else, backslashes
// included, is kept as is. Text without such characters is returned
// unchanged, without allocating.
func Line(s string) string { return escape(s, false) }

// Lines is Line for text of several lines, such as the errors of one
// entry joined by newlines, shown after a prefix ("demo: failed: "): each
// line escaped, every line after the first indented by two spaces. So each
// error reads on its own line, and no line, a server's text included, can
// pass for a line of its own. Trailing newlines are dropped.
func Lines(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = Line(l)
	}
	return strings.Join(lines, "\n  ")
}

// Summary is Line of s's first line (its spaces at either end trimmed), cut
// to 100 characters with "…": a description in a one-line listing.
func Summary(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	const max = 100
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return Line(s)
}

// Text is Line for multi-line text, such as a tool result that is printed
// whole: newlines and tabs are kept, every other control character (the
// carriage return included, which would overwrite the line) is escaped.
func Text(s string) string { return escape(s, true) }

func escape(s string, multiline bool) string {
	i := firstUnsafe(s, multiline)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[i]))
		case !unsafe(r, multiline):
			b.WriteString(s[i : i+size])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80:
			b.WriteString(`\x`)
			b.WriteString(hex2(byte(r)))
		case r <= 0x9f: // C1
			b.WriteString(`\u00`)
			b.WriteString(hex2(byte(r)))
		case r <= 0xFFFF: // Hidden
			fmt.Fprintf(&b, `\u%04x`, r)
		default: // Hidden, past the BMP: eight digits, as Go writes it
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		i += size
	}
	return b.String()
}

// firstUnsafe returns the index of the first byte of s that escape must
// rewrite, or len(s).
func firstUnsafe(s string, multiline bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if unsafe(rune(c), multiline) {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unsafe(r, multiline) {
			return i
		}
		i += size
	}
	return len(s)
}

// unsafe reports whether r is a control character to escape, or one
// that reorders or hides text (Hidden).
func unsafe(r rune, multiline bool) bool {
	switch {
	case multiline && (r == '\n' || r == '\t'):
		return false
	case r < 0x20, r == 0x7f:
		return true
	default:
		return 0x80 <= r && r <= 0x9f || Hidden(r)
	}
}

// Hidden reports whether r reorders or hides text without showing itself:
// every format character and default-ignorable code point
// (invisible.Is): bidi embeddings, overrides and isolates, directional
// marks, zero-width spaces, the BOM, tag characters (which spell ASCII
// unseen), invisible operators, variation selectors, Hangul fillers.
// Shown, "run harmless.sh" can read as what it is not. The zero-width
// joiner and the emoji presentation selector (U+200D, U+FE0F), which
// emoji sequences need and which hide nothing, are not.
func Hidden(r rune) bool {
	return r != 0x200D && r != 0xFE0F && invisible.Is(r)
}

// hex2 is c as two lowercase hex digits.
func hex2(c byte) string {
	h := strconv.FormatUint(uint64(c), 16)
	if len(h) == 1 {
		return "0" + h
	}
	return h
}
