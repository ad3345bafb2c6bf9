package termsafe

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLineAndText(t *testing.T) {
	tests := []struct {
		name, in, line, text string
	}{
		{"empty", "", "", ""},
		{"plain", "plain text", "plain text", "plain text"},
		{"unicode kept", "héllo — 日本 🙂 \u00a0", "héllo — 日本 🙂 \u00a0", "héllo — 日本 🙂 \u00a0"},
		{"backslashes kept", `C:\path\x1b`, `C:\path\x1b`, `C:\path\x1b`},
		{"window title (OSC)", "a\x1b]0;pwned\x07b", `a\x1b]0;pwned\x07b`, `a\x1b]0;pwned\x07b`},
		{"clear screen (CSI)", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`, `\x1b[2J\x1b[H`},
		{"newline and tab", "1.0\nfake\trow", `1.0\nfake\trow`, "1.0\nfake\trow"},
		{"carriage return", "ok\rEVIL", `ok\rEVIL`, `ok\rEVIL`},
		{"CRLF", "a\r\nb", `a\r\nb`, "a\\r\nb"},
		{"NUL, BEL, backspace, DEL", "\x00\x07\x08\x7f", `\x00\x07\x08\x7f`, `\x00\x07\x08\x7f`},
		{"C1 CSI as a character", "a\u009b2Jb", `a\u009b2Jb`, `a\u009b2Jb`},
		{"C1 range ends", "\u0080\u009f\u00a0", `\u0080\u009f` + "\u00a0", `\u0080\u009f` + "\u00a0"},
		{"raw 8-bit CSI byte (invalid UTF-8)", "a\x9b2J", `a\x9b2J`, `a\x9b2J`},
		{"truncated UTF-8", "ok\xe6\x97", `ok\xe6\x97`, `ok\xe6\x97`},
		{"0xff", "\xff", `\xff`, `\xff`},
		{"bidi override (reads harmless)", "run \u202eexe.sh", `run \u202eexe.sh`, `run \u202eexe.sh`},
		{"isolates, marks, zero-width space, BOM", "\u2066a\u2069\u200f\u200b\ufeff", `\u2066a\u2069\u200f\u200b\ufeff`, `\u2066a\u2069\u200f\u200b\ufeff`},
		{"emoji joiner kept", "👨\u200d👩", "👨\u200d👩", "👨\u200d👩"},
		{"emoji presentation selector kept", "\u2764\ufe0f", "\u2764\ufe0f", "\u2764\ufe0f"},
		{"tag characters (ASCII smuggling)", "a\U000E0041b\U000E007F", `a\U000e0041b\U000e007f`, `a\U000e0041b\U000e007f`},
		{"invisible operators, Mongolian separator", "f\u2061x\u2064\u180e", `f\u2061x\u2064\u180e`, `f\u2061x\u2064\u180e`},
		{"Hangul fillers", "\u115f\u3164\uffa0", `\u115f\u3164\uffa0`, `\u115f\u3164\uffa0`},
		{"soft hyphen, grapheme joiner, other selectors", "ig\u00adn\u034fore\ufe0e\U000E0100", `ig\u00adn\u034fore\ufe0e\U000e0100`, `ig\u00adn\u034fore\ufe0e\U000e0100`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Line(tt.in); got != tt.line {
				t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.line)
			}
			if got := Text(tt.in); got != tt.text {
				t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.text)
			}
		})
	}
}

func TestUnchangedDoesNotAllocate(t *testing.T) {
	s := strings.Repeat("a tool description — ünïcödé\n\t", 10)
	if n := testing.AllocsPerRun(100, func() { _ = Text(s) }); n != 0 {
		t.Errorf("Text of safe text allocates %v times", n)
	}
}

// FuzzEscape checks, for any input, that the output is valid UTF-8 with no
// control character but those allowed, that escaping is idempotent, and that
// safe text passes unchanged.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b]0;t\x07", "a\nb\tc\r", "\u009b\x9b\xff", "é\xe6\x97"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, multiline := range []bool{false, true} {
			esc := Line
			if multiline {
				esc = Text
			}
			out := esc(s)
			if !utf8.ValidString(out) {
				t.Fatalf("output is not valid UTF-8: %q → %q", s, out)
			}
			for _, r := range out {
				if unsafe(r, multiline) {
					t.Fatalf("output keeps control character %U: %q → %q", r, s, out)
				}
			}
			if again := esc(out); again != out {
				t.Fatalf("not idempotent: %q → %q → %q", s, out, again)
			}
			if firstUnsafe(s, multiline) == len(s) && out != s {
				t.Fatalf("safe text changed: %q → %q", s, out)
			}
		}
	})
}

// Summary keeps the first line, cut to 100 characters (not bytes: a
// multi-byte character is never split), and escapes what it keeps.
func TestSummary(t *testing.T) {
	long := strings.Repeat("é", 150)
	for in, want := range map[string]string{
		"":                       "",
		"  one\ntwo":             "one",
		"tab\there\r\nnext":      `tab\there\r`,
		long:                     strings.Repeat("é", 99) + "…",
		strings.Repeat("a", 100): strings.Repeat("a", 100),
	} {
		if got := Summary(in); got != want {
			t.Errorf("Summary(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLines(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"one", "one"},
		{"a: x\nb: y", "a: x\n  b: y"},
		{"a\n\x1b[2Jmcpbridge: forged\r", "a\n  \\x1b[2Jmcpbridge: forged\\r"},
		{"a\n", "a"},
	}
	for _, tt := range tests {
		if got := Lines(tt.in); got != tt.want {
			t.Errorf("Lines(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
