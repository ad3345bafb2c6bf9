package childproc

import (
	"slices"
	"sort"
	"strings"
)

// Env builds a child environment: the parent environment (as from
// os.Environ()) scrubbed of every variable whose NAME contains KEY,
// PASSWORD, PASSWD, SECRET, TOKEN or CREDENTIAL (case-insensitive substring)
// or starts with MCPBRIDGE_ (case-insensitive), and of those named in
// withheld (the config's credentials, whatever their names), then the
// overlay applied on top. The overlay always wins, including
// credential-shaped and withheld names, because that is how a token is
// forwarded deliberately; "" sets a variable to empty.
//
// The result is sorted by name for determinism. Parent entries without '='
// or with an empty name are dropped; when a parent name repeats, the last
// entry wins (as in os/exec). Overlay names that no environment can hold
// (empty, or containing '=' or NUL) are skipped: config validation is
// expected to reject them first.
func Env(parent []string, overlay map[string]string, withheld ...string) []string {
	vars := make(map[string]string, len(parent)+len(overlay))
	for _, kv := range parent {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" || Scrubbed(name) || slices.Contains(withheld, name) {
			continue
		}
		vars[name] = value
	}
	for name, value := range overlay {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			continue
		}
		vars[name] = value
	}
	names := make([]string, 0, len(vars))
	for name := range vars {
		names = append(names, name)
	}
	sort.Strings(names)
	env := make([]string, len(names))
	for i, name := range names {
		env[i] = name + "=" + vars[name]
	}
	return env
}

// Scrubbed reports whether a parent variable must not reach a child: its
// name looks like it carries a credential, or it configures mcpbridge itself.
// Over-matching (MONKEY, TOKENIZERS_PARALLELISM) is accepted: the overlay
// can always put a variable back.
func Scrubbed(name string) bool {
	return strings.HasPrefix(strings.ToUpper(name), "MCPBRIDGE_") || SecretName(name)
}

// SecretName reports whether a variable's name says it carries a
// credential: it contains KEY, PASSWORD, PASSWD, SECRET, TOKEN or
// CREDENTIAL, in any case.
func SecretName(name string) bool {
	upper := strings.ToUpper(name)
	for _, marker := range [...]string{"KEY", "PASSWORD", "PASSWD", "SECRET", "TOKEN", "CREDENTIAL"} {
		if strings.Contains(upper, marker) {
			return true
		}
	}
	return false
}

// lookupEnv returns the value of name in env; the last entry wins, as it
// does for the child.
func lookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if n, v, ok := strings.Cut(env[i], "="); ok && n == name {
			return v, true
		}
	}
	return "", false
}
