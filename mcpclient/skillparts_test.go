package mcpclient

import (
	"strings"
	"testing"
)

// A skill file's bytes come from a resources/read result as text or as a
// base64 blob; anything else is refused with what was wrong.
func TestResourceBytes(t *testing.T) {
	for _, c := range []struct {
		name, wire, want, err string
	}{
		{"text", `{"contents":[{"uri":"skill://a/SKILL.md","text":"# A"}]}`, "# A", ""},
		{"blob", `{"contents":[{"uri":"skill://a/x.bin","blob":"aGk="}]}`, "hi", ""},
		{"bad blob", `{"contents":[{"uri":"skill://a/x.bin","blob":"not base64!"}]}`, "", "blob is not base64"},
		{"no content", `{"contents":[]}`, "", "returned no text or blob content"},
		{"not a result", `[1]`, "", "invalid result"},
	} {
		got, err := resourceBytes([]byte(c.wire), "skill://a/f")
		if string(got) != c.want || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %q, %v; want %q and an error with %q", c.name, got, err, c.want, c.err)
		}
	}
}

// A skill's name is its SKILL.md's directory; a URI that names no
// SKILL.md gives none, and the scheme is what precedes "://".
func TestSkillURIParts(t *testing.T) {
	for uri, want := range map[string][2]string{
		"skill://pdf-processing/SKILL.md":         {"pdf-processing", "skill://"},
		"skill://team/tools/code-review/SKILL.md": {"code-review", "skill://"},
		"skill://pdf-processing/references/a.md":  {"", "skill://"},
		"no-scheme/SKILL.md":                      {"no-scheme", ""},
	} {
		if name, scheme := skillNameOf(uri), skillSchemeOf(uri); name != want[0] || scheme != want[1] {
			t.Errorf("%s: name %q, scheme %q; want %q, %q", uri, name, scheme, want[0], want[1])
		}
	}
}
