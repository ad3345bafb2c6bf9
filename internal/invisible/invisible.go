// Package invisible knows the characters that render as nothing: a
// person reading text does not see them, while a model, a program or a
// terminal reads them (a hidden instruction in tag characters, a word
// split unseen, text reordered). The tool scanner reports them; the
// terminal and the console show them as codes.
package invisible

import "unicode"

// Is reports whether r renders as nothing: a format character (category
// Cf: zero-width spaces and joiners, bidi controls, tags, invisible
// operators) or another default-ignorable one (variation selectors, the
// combining grapheme joiner, Hangul fillers).
func Is(r rune) bool {
	return unicode.Is(unicode.Cf, r) || unicode.Is(DefaultIgnorable, r)
}

// DefaultIgnorable is Unicode's Default_Ignorable_Code_Point property
// (DerivedCoreProperties.txt of Unicode 15.0.0, the version of Go's
// unicode tables; unchanged in 15.1 and 16.0), for which the unicode
// package has no table: what a renderer shows as nothing when it has no
// glyph for it, unassigned code points of those ranges included.
var DefaultIgnorable = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x00AD, Hi: 0x00AD, Stride: 1}, // soft hyphen
		{Lo: 0x034F, Hi: 0x034F, Stride: 1}, // combining grapheme joiner
		{Lo: 0x061C, Hi: 0x061C, Stride: 1}, // Arabic letter mark
		{Lo: 0x115F, Hi: 0x1160, Stride: 1}, // Hangul choseong and jungseong fillers
		{Lo: 0x17B4, Hi: 0x17B5, Stride: 1}, // Khmer inherent vowels
		{Lo: 0x180B, Hi: 0x180F, Stride: 1}, // Mongolian free variation selectors, vowel separator
		{Lo: 0x200B, Hi: 0x200F, Stride: 1}, // zero-width space, joiners, direction marks
		{Lo: 0x202A, Hi: 0x202E, Stride: 1}, // bidi embeddings and overrides
		{Lo: 0x2060, Hi: 0x206F, Stride: 1}, // word joiner, invisible operators, bidi isolates, deprecated formats
		{Lo: 0x3164, Hi: 0x3164, Stride: 1}, // Hangul filler
		{Lo: 0xFE00, Hi: 0xFE0F, Stride: 1}, // variation selectors
		{Lo: 0xFEFF, Hi: 0xFEFF, Stride: 1}, // zero-width no-break space
		{Lo: 0xFFA0, Hi: 0xFFA0, Stride: 1}, // halfwidth Hangul filler
		{Lo: 0xFFF0, Hi: 0xFFF8, Stride: 1}, // unassigned
	},
	R32: []unicode.Range32{
		{Lo: 0x1BCA0, Hi: 0x1BCA3, Stride: 1}, // shorthand format controls
		{Lo: 0x1D173, Hi: 0x1D17A, Stride: 1}, // musical symbol format controls
		{Lo: 0xE0000, Hi: 0xE0FFF, Stride: 1}, // tags, variation selectors 17-256, unassigned
	},
	LatinOffset: 1,
}
