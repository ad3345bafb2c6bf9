package yamlconf

import (
	"slices"
	"testing"
)

// A URL's credentials are the variables of its userinfo, query and
// fragment, or all of them when a variable makes up its scheme or host;
// those of its host or path alone are not.
func TestURLCredentialRefs(t *testing.T) {
	for s, want := range map[string][]string{
		"redis://:${RPASS}@${REDIS_HOST}:6379":          {"RPASS"},
		"https://${USER_}:${PASS}@example.com/${PATH_}": {"USER_", "PASS"},
		"https://${HOST}/mcp?key=${KEY_}#${FRAG}":       {"KEY_", "FRAG"},
		"http://${HOST:-localhost:3001}/mcp":            nil,
		"${SERVER_URL}":                                 {"SERVER_URL"},
		"${SCHEME}://example.com/${P}":                  {"SCHEME", "P"},
		"https://example.com/mcp":                       nil,
	} {
		if got := URLCredentialRefs(s); !slices.Equal(got, want) {
			t.Errorf("URLCredentialRefs(%q) = %q, want %q", s, got, want)
		}
	}
	if got := Refs("${A:-${B}} $$C ${A}"); !slices.Equal(got, []string{"A", "B"}) {
		t.Errorf("Refs: %q", got)
	}
}
