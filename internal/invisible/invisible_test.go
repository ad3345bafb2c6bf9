package invisible

import (
	"testing"
	"unicode"
)

// TestDefaultIgnorable holds the table to the definition of the property
// in DerivedCoreProperties.txt, from the tables Go has: Other_DI + Cf +
// Variation_Selector - White_Space - FFF9..FFFB (interlinear annotation)
// - 13430..1343F (Egyptian hieroglyph format controls) -
// Prepended_Concatenation_Mark.
func TestDefaultIgnorable(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := (unicode.In(r, unicode.Other_Default_Ignorable_Code_Point, unicode.Cf, unicode.Variation_Selector)) &&
			!unicode.Is(unicode.White_Space, r) && !(r >= 0xFFF9 && r <= 0xFFFB) && !(r >= 0x13430 && r <= 0x1343F) &&
			!unicode.Is(unicode.Prepended_Concatenation_Mark, r)
		if got := unicode.Is(DefaultIgnorable, r); got != want {
			t.Errorf("U+%04X: default-ignorable %v, want %v", r, got, want)
		}
	}
}

// Is holds the format characters and the default-ignorable ones, and
// nothing a person sees (a no-break space is a space they see).
func TestIs(t *testing.T) {
	for r, want := range map[rune]bool{
		'a': false, ' ': false, 0x00A0: false, 'é': false, 0x1F600: false,
		0x200B: true, 0x202E: true, 0xE0041: true, 0x2061: true, 0x180E: true, 0x3164: true, 0x034F: true, 0xFE0F: true, 0x00AD: true,
	} {
		if got := Is(r); got != want {
			t.Errorf("Is(U+%04X) = %v, want %v", r, got, want)
		}
	}
}
