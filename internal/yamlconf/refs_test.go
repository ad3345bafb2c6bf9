package yamlconf

import (
	"slices"
	"testing"
)

// A URL's credentials are the variables of its userinfo, query and
// fragment, those of their defaults too, or all of them when a variable
// makes up its scheme or host; those of its host or path alone are not.
func TestURLCredentialRefs(t *testing.T) {
	for s, want := range map[string][]string{
		"redis://:${RPASS}@${REDIS_HOST}:6379":          {"RPASS"},
		"https://${USER_}:${PASS}@example.com/${PATH_}": {"USER_", "PASS"},
		"https://${HOST}/mcp?key=${KEY_}#${FRAG}":       {"KEY_", "FRAG"},
		"http://${HOST:-localhost:3001}/mcp":            nil,
		"${SERVER_URL}":                                 {"SERVER_URL"},
		"${SCHEME}://example.com/${P}":                  {"SCHEME", "P"},
		"https://example.com/mcp":                       nil,
		"redis://:${RPASS:-${OLD_RPASS}}@${H:-${H2}}:1": {"RPASS", "OLD_RPASS"},
		"https://h/mcp?key=${K:-$${X}}&k2=${K2:-}":      {"K", "K2"},
		"https://h/$${NOT}?q=1":                         nil,
		"https://h/mcp?key=${UNCLOSED":                  nil,
	} {
		if got := URLCredentialRefs(s); !slices.Equal(got, want) {
			t.Errorf("URLCredentialRefs(%q) = %q, want %q", s, got, want)
		}
	}
	if got := Refs("${A:-${B}} $$C ${A}"); !slices.Equal(got, []string{"A", "B"}) {
		t.Errorf("Refs: %q", got)
	}
}
