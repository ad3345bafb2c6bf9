package textcut

import (
	"testing"
	"unicode/utf8"
)

// A cut never splits a character, and never goes over its bound.
func TestPrefixAndMarked(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 3, "hel"},
		{"héllo", 2, "h"},
		{"héllo", 3, "hé"},
		{"日本", 5, "日"},
		{"日本", 0, ""},
		{"x", -1, ""},
	} {
		if got := Prefix(c.s, c.n); got != c.want || !utf8.ValidString(got) {
			t.Errorf("Prefix(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
	if got := Marked("日本語です", 8, "…"); got != "日…" || len(got) > 8 {
		t.Errorf("Marked = %q", got)
	}
	if got := Marked("short", 8, "…"); got != "short" {
		t.Errorf("Marked of what fits = %q", got)
	}
}
