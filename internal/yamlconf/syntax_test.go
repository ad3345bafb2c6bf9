package yamlconf_test

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/internal/yamlconf"
)

// yaml.v3 reports these errors without a line; LocateSyntaxError finds it.
func TestLocateSyntaxError(t *testing.T) {
	tests := []struct {
		name      string
		src       string
		line, col int
	}{
		{"unknown anchor", "- id: a\n  name: x\n  config: *nope\n", 3, 11},
		{"unknown anchor after a comment and a string naming it",
			"# see *nope\n- id: '*nope'\n  name: \"*nope\"\n  config: {a: *nope}\n", 4, 15},
		{"alias before its anchor", "- a: *x\n- b: &x 1\n", 1, 6},
		{"only the second alias is unknown", "- a: &x 1\n- b: *x\n- c: [*y, *x]\n", 3, 7},
		{"longer anchor name is another", "- a: &xy 1\n- b: *xy\n- c: *x\n", 3, 6},
		{"alias as a key", "a: 1\n*nope: 2\n", 2, 1},
		{"alias before a flow indicator", "- [*nope]\n", 1, 4},
		{"invalid UTF-8", "- id: a\n  name: \"ab\xffc\"\n", 2, 12},
		{"truncated UTF-8 after multibyte text", "- id: é\xe6\x97\n", 1, 8},
		{"control character", "- id: \"a\x01\"\n", 1, 9},
		{"UTF-16 big endian non-character", "\xfe\xff\x00a\x00\n\xff\xfe", 2, 1},
		{"UTF-16 little endian control character", "\xff\xfea\x00b\x00\x01\x00", 1, 3},
		{"UTF-16 lone low surrogate", "\xfe\xff\x00a\xdc\x00", 1, 2},
		{"UTF-16 cut code unit", "\xfe\xff\x00a\x00", 1, 2},
		{"byte order mark does not count", "\xef\xbb\xbf- id: \x01\n", 1, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n yaml.Node
			err := yaml.Unmarshal([]byte(tt.src), &n)
			if err == nil {
				t.Fatal("the source parses")
			}
			msg := strings.TrimPrefix(err.Error(), "yaml: ")
			if strings.HasPrefix(msg, "line ") {
				t.Fatalf("yaml.v3 gave a line after all: %s", msg)
			}
			line, col, ok := yamlconf.LocateSyntaxError([]byte(tt.src), msg)
			if !ok || line != tt.line || col != tt.col {
				t.Errorf("LocateSyntaxError(%q) = %d:%d %t, want %d:%d", msg, line, col, ok, tt.line, tt.col)
			}
		})
	}
}

func TestLocateSyntaxErrorUnknown(t *testing.T) {
	for _, tt := range []struct{ src, msg string }{
		{"a: 1\n", "did not find expected key"},          // not one of the position-less errors
		{"a: '*x'\n", "unknown anchor 'x' referenced"},   // no alias *x in the file
		{"a: 1\n", "control characters are not allowed"}, // nothing refused in the file
		{"\xff\xfea\x00", "invalid leading UTF-8 octet"}, // UTF-16 without a bad character
	} {
		if line, col, ok := yamlconf.LocateSyntaxError([]byte(tt.src), tt.msg); ok {
			t.Errorf("LocateSyntaxError(%q, %q) = %d:%d, want not found", tt.src, tt.msg, line, col)
		}
	}
}
