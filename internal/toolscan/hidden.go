package toolscan

import (
	"encoding/base64"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcpbridge/mcpbridge/internal/invisible"
)

// hidden reports characters a person does not see but a model reads:
// Unicode tag characters and runs of variation selectors (both can carry
// a whole ASCII text, "ASCII smuggling"), bidi controls, zero-width
// characters, and words mixing Latin with look-alike letters. Smuggled
// text is decoded and scanned again.
func hidden(s string, depth int, report reportFunc) {
	if smuggled, ok := decodeTags(s); ok {
		report(High, RuleHiddenText, "Unicode tag characters read: "+escape(smuggled, false, false))
		if depth < maxNesting {
			scanText(smuggled, depth+1, report)
		}
	}
	if smuggled, n := decodeSelectors(s); n >= 3 {
		report(High, RuleHiddenText, fmt.Sprintf("%d variation selectors in a row, reading: %s", n, escape(smuggled, false, false)))
		if depth < maxNesting && utf8.ValidString(smuggled) {
			scanText(smuggled, depth+1, report)
		}
	}
	if i := strings.IndexFunc(s, isBidiControl); i >= 0 {
		report(Medium, RuleBidi, quote(s, i, nextRune(s, i)))
	}
	zeroWidth(s, report)
	if w := mixedScriptWord(s); w != "" {
		report(Medium, RuleConfusable, "Latin word written with look-alike letters: "+escape(w, false, false))
	}
}

// decodeTags returns the ASCII text that s's tag characters (U+E0000–
// U+E007F) spell, and whether it has any.
func decodeTags(s string) (string, bool) {
	var b strings.Builder
	found := false
	for _, r := range s {
		if isTag(r) {
			found = true
			if c := r - 0xE0000; c >= 0x20 && c < 0x7F || c == '\n' {
				b.WriteRune(c)
			}
		}
	}
	return b.String(), found
}

// decodeSelectors returns the bytes of the longest run of variation
// selectors in s (U+FE00–FE0F as 0–15, U+E0100–E01EF as 16–255, the
// encoding of emoji smuggling) and the run's length. One selector after
// an emoji is ordinary.
func decodeSelectors(s string) (string, int) {
	var best, cur []byte
	for _, r := range s {
		switch {
		case r >= 0xFE00 && r <= 0xFE0F:
			cur = append(cur, byte(r-0xFE00))
		case r >= 0xE0100 && r <= 0xE01EF:
			cur = append(cur, byte(r-0xE0100+16))
		default:
			cur = cur[:0]
			continue
		}
		if len(cur) > len(best) {
			best = append(best[:0], cur...)
		}
	}
	return string(best), len(best)
}

func isBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069
}

func isTag(r rune) bool { return r >= 0xE0000 && r <= 0xE007F }

// isZeroWidth reports the characters that render as nothing which no
// other rule reports: the default-ignorable ones but for bidi controls,
// tag characters and variation selectors, and the direction marks that
// right-to-left text uses as it is.
func isZeroWidth(r rune) bool {
	return unicode.Is(invisible.DefaultIgnorable, r) && !isBidiControl(r) && !isTag(r) && !isVariationSelector(r) &&
		r != 0x200E && r != 0x200F && r != 0x061C
}

// ordinary reports an invisible r that belongs to the text before it: a
// joiner inside an emoji sequence (👨‍💻), a Mongolian free variation
// selector after a Mongolian letter, a Khmer inherent vowel after a Khmer
// one.
func ordinary(r, prev rune) bool {
	switch {
	case r == 0x200D:
		return unicode.Is(unicode.So, prev) || isVariationSelector(prev)
	case r >= 0x180B && r <= 0x180F && r != 0x180E:
		return unicode.Is(unicode.Mongolian, prev)
	case r == 0x17B4 || r == 0x17B5:
		return unicode.Is(unicode.Khmer, prev)
	}
	return false
}

// zeroWidth reports zero-width characters: medium for a run of two or
// more or three in all (words split to dodge filters, or a hidden
// message in binary), low for one.
func zeroWidth(s string, report reportFunc) {
	total, run, longest, first := 0, 0, 0, -1
	var prev rune
	for i, r := range s {
		if !isZeroWidth(r) || ordinary(r, prev) {
			run, prev = 0, r
			continue
		}
		if first < 0 {
			first = i
		}
		total, run, prev = total+1, run+1, r
		longest = max(longest, run)
	}
	switch {
	case longest >= 2 || total >= 3:
		report(Medium, RuleZeroWidth, fmt.Sprintf("%d zero-width characters: %s", total, quote(s, first, nextRune(s, first))))
	case total == 1:
		report(Low, RuleZeroWidth, quote(s, first, nextRune(s, first)))
	}
}

// mixedScriptWord returns the first word of s that mixes Latin letters
// with Cyrillic or Greek ones, or "".
func mixedScriptWord(s string) string {
	for w := range strings.FieldsFuncSeq(s, func(r rune) bool { return !unicode.IsLetter(r) && !invisible.Is(r) }) {
		var latin, other bool
		for _, r := range w {
			switch {
			case unicode.Is(unicode.Latin, r):
				latin = true
			case unicode.Is(unicode.Cyrillic, r) || unicode.Is(unicode.Greek, r):
				other = true
			}
		}
		if latin && other {
			return w
		}
	}
	return ""
}

// Padding thresholds: a run of blank characters this long pushes what
// follows out of a reviewer's view.
const (
	padRunes = 100
	padLines = 15
)

// padding reports long runs of white space: medium when text follows
// them (it was pushed out of view), low when they only trail.
func padding(s string, report reportFunc) {
	start, runes, lines := -1, 0, 0
	check := func(end int) bool {
		if runes < padRunes && lines < padLines {
			return false
		}
		rest := strings.TrimSpace(s[end:])
		sev := Low
		if rest != "" {
			sev = Medium
		}
		report(sev, RulePadding, fmt.Sprintf("%d blank characters (%d line breaks), then: %s", runes, lines, escape(firstRunes(rest, 60), false, len(rest) > 60)))
		return true
	}
	for i, r := range s {
		if unicode.IsSpace(r) {
			if start < 0 {
				start, runes, lines = i, 0, 0
			}
			runes++
			if r == '\n' {
				lines++
			}
			continue
		}
		if start >= 0 && check(i) {
			return
		}
		start = -1
	}
	if start >= 0 {
		check(len(s))
	}
}

func firstRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// Bounds of the encoded-payload rule per string: the runs scanned one by
// one (the rest are scanned together, as one text), and the bytes of a
// run decoded.
const (
	maxCandidates = 16
	maxEncoded    = 16 << 10
)

// encoded decodes base64 runs that decode to text and scans that text:
// an instruction the other rules would catch, encoded to pass them.
func encoded(s string, depth int, report reportFunc) {
	var rest []string
	for i, m := range base64Runs(s) {
		text, ok := decodeBase64Text(m[:min(len(m), maxEncoded)])
		switch {
		case !ok:
		case i < maxCandidates:
			scanDecoded(text, depth, report)
		default:
			rest = append(rest, text)
		}
	}
	if rest != nil {
		scanDecoded(strings.Join(rest, "\n"), depth, report)
	}
}

// scanDecoded reports text decoded from base64: as strong as what the
// other rules find in it (medium at least), low for other prose.
func scanDecoded(text string, depth int, report reportFunc) {
	worst := Severity(0)
	scanText(text, depth+1, func(sev Severity, _, _ string) { worst = max(worst, sev) })
	switch {
	case worst >= Low:
		report(max(worst, Medium), RuleEncoded, "base64 reads: "+escape(firstRunes(text, 100), false, len(text) > 100))
	case len(strings.Fields(text)) >= 4:
		report(Low, RuleEncoded, "base64 reads: "+escape(firstRunes(text, 100), false, len(text) > 100))
	}
}

// decodeBase64Text decodes m in whichever base64 form it is, and reports
// whether the result is text: valid UTF-8, almost all printable, with
// spaces or letters beyond ASCII.
func decodeBase64Text(m string) (string, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		b, err := enc.DecodeString(m)
		if err != nil {
			continue
		}
		return string(b), isText(string(b))
	}
	return "", false
}

func isText(s string) bool {
	if !utf8.ValidString(s) || len(s) < 8 {
		return false
	}
	printable, total, words := 0, 0, false
	for _, r := range s {
		total++
		if unicode.IsPrint(r) || r == '\n' || r == '\t' || invisible.Is(r) { // hidden text in base64 is text too
			printable++
		}
		if r == ' ' || r > 0x2E80 {
			words = true
		}
	}
	return words && printable*100 >= total*95
}

// base64Runs returns the runs of s of at least 24 bytes of the base64
// alphabets (standard and URL) with their padding: candidates long enough
// to hold a sentence.
func base64Runs(s string) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i < len(s) && isBase64Byte(s[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start >= 24 {
			end := i
			for end < len(s) && end-i < 2 && s[end] == '=' {
				end++
			}
			out = append(out, s[start:end])
		}
		start = -1
	}
	return out
}

func isBase64Byte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '_' || c == '-'
}
