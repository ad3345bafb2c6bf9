package toolscan

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/mcpbridge/mcpbridge/internal/invisible"
)

// folded is a string prepared for the text rules and, once a rule
// matched, the byte offset in the original of each of its bytes, so that
// an excerpt quotes what the server sent.
type folded struct {
	text string
	offs []int // len(text)+1 entries; nil until offsets is called
	orig string
}

// fold prepares s for matching: invisible format characters and variation
// selectors removed (they split words to dodge filters), compatibility
// forms unified (NFKC: fullwidth ＩＭＰＯＲＴＡＮＴ is IMPORTANT), Cyrillic
// and Greek look-alikes read as Latin, lower case, and each run of white
// space one space.
func fold(s string) folded {
	if plain(s) {
		return folded{text: s, orig: s}
	}
	return folded{text: foldTo(s, nil), orig: s}
}

// plain reports whether s is its own folding: ASCII without capitals or
// runs of white space.
func plain(s string) bool {
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf || 'A' <= c && c <= 'Z':
			return false
		case asciiSpace(c):
			if space || c != ' ' {
				return false
			}
			space = true
		default:
			space = false
		}
	}
	return true
}

// offsets fills f.offs (matches are rare: most strings never need them).
func (f *folded) offsets() {
	if f.offs == nil {
		f.offs = make([]int, 0, len(f.text)+1)
		foldTo(f.orig, &f.offs)
		f.offs = append(f.offs, len(f.orig))
	}
}

// foldTo folds s, appending to offs, when not nil, the original offset of
// each byte written.
func foldTo(s string, offs *[]int) string {
	b := make([]byte, 0, len(s))
	space := false
	var buf [utf8.UTFMax]byte
	for i, r := range s {
		n := len(b)
		switch {
		case r < utf8.RuneSelf && asciiSpace(byte(r)):
			if !space {
				b = append(b, ' ')
			}
			space = true
		case r < utf8.RuneSelf:
			c := byte(r)
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			b, space = append(b, c), false
		case invisible.Is(r):
		case unicode.IsSpace(r):
			if !space {
				b = append(b, ' ')
			}
			space = true
		default:
			space = false
			for _, c := range string(norm.NFKC.Append(nil, buf[:utf8.EncodeRune(buf[:], r)]...)) {
				b = utf8.AppendRune(b, unicode.ToLower(latin(c)))
			}
		}
		if offs != nil {
			for range len(b) - n {
				*offs = append(*offs, i)
			}
		}
	}
	return string(b)
}

func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func isVariationSelector(r rune) bool {
	return r >= 0xFE00 && r <= 0xFE0F || r >= 0xE0100 && r <= 0xE01EF
}

// lookalikes maps Cyrillic and Greek letters that look like Latin ones.
var lookalikes = map[rune]rune{
	'а': 'a', 'в': 'b', 'е': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p', 'с': 'c', 'т': 't', 'у': 'y', 'х': 'x',
	'і': 'i', 'ј': 'j', 'ѕ': 's', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'ӏ': 'l', 'ո': 'n',
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C', 'Т': 'T', 'Х': 'X', 'І': 'I', 'Ј': 'J', 'Ѕ': 'S',
	'α': 'a', 'ο': 'o', 'ν': 'v', 'ρ': 'p', 'τ': 't', 'ι': 'i', 'κ': 'k', 'υ': 'u',
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O', 'Ρ': 'P', 'Τ': 'T', 'Χ': 'X', 'Υ': 'Y',
}

func latin(r rune) rune {
	if l, ok := lookalikes[r]; ok {
		return l
	}
	return r
}

// excerpt quotes the original text of the folded match [i, j), with a
// little context, escaped and at most excerptRunes long.
func (f *folded) excerpt(orig string, i, j int) string {
	f.offsets()
	start, end := f.offs[i], f.offs[j]
	if j > 0 && j < len(f.offs) && f.offs[j] == f.offs[j-1] {
		end = nextRune(orig, end)
	}
	return quote(orig, start, end)
}

func nextRune(s string, i int) int {
	if i >= len(s) {
		return len(s)
	}
	_, n := utf8.DecodeRuneInString(s[i:])
	return i + n
}

// excerptRunes bounds an excerpt; context is what is shown either side.
const (
	excerptRunes = 120
	context      = 20
)

// quote escapes s[start:end] with up to context runes either side.
func quote(s string, start, end int) string {
	for n := 0; n < context && start > 0; n++ {
		_, w := utf8.DecodeLastRuneInString(s[:start])
		start -= w
	}
	for n := 0; n < context && end < len(s); n++ {
		_, w := utf8.DecodeRuneInString(s[end:])
		end += w
	}
	return escape(s[start:end], start > 0, end < len(s))
}

// escape shows every invisible, control or unassigned character as a Go
// escape (\n, \u202E, \U000E0041) and cuts s to excerptRunes, with "…"
// where text was left out.
func escape(s string, before, after bool) string {
	var b strings.Builder
	if before {
		b.WriteString("…")
	}
	n, spaces := 0, 0
	for _, r := range s {
		if n == excerptRunes {
			after = true
			break
		}
		n++
		if r == ' ' {
			spaces++
			continue
		}
		b.WriteString(spaceRun(spaces))
		spaces = 0
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == utf8.RuneError:
			b.WriteString(`\uFFFD`)
		case r == ' ' || unicode.IsPrint(r) && !invisible.Is(r):
			b.WriteRune(r)
		case r > 0xFFFF:
			fmt.Fprintf(&b, `\U%08X`, r)
		default:
			fmt.Fprintf(&b, `\u%04X`, r)
		}
	}
	b.WriteString(spaceRun(spaces))
	if after {
		b.WriteString("…")
	}
	return b.String()
}

// spaceRun writes n spaces, a run longer than indentation as a count so
// that padding does not fill the excerpt.
func spaceRun(n int) string {
	if n <= 8 {
		return strings.Repeat(" ", n)
	}
	return fmt.Sprintf(" [%d spaces] ", n)
}
