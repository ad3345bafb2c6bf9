package toolscan

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
		if got := unicode.Is(defaultIgnorable, r); got != want {
			t.Errorf("U+%04X: default-ignorable %v, want %v", r, got, want)
		}
	}
}
