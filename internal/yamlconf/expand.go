package yamlconf

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// maxNesting bounds how deeply references may nest in defaults
// (${A:-${B:-${C}}} nests 3 deep), so a hostile file cannot exhaust the
// stack.
const maxNesting = 16

// Expand substitutes environment references in s:
//
//   - ${VAR} is the value of VAR; an unset VAR is an error (set but empty is
//     fine);
//   - ${VAR:-default} is the value of VAR, or default when VAR is unset or
//     empty; default is expanded in turn, so it may hold references
//     (${A:-${B}}, ${A:-${B:-x}}, ${HOME:-/home}/${USER:-me}) and $$, and a
//     default that is not used is only checked for syntax (an unset
//     variable in it is no error). A default ends at the first "}" that
//     closes no reference of its own, so it cannot contain a literal "}";
//   - $$ is a literal $, inside a default too;
//   - a $ followed by anything else is a literal $.
//
// VAR must match [A-Za-z_][A-Za-z0-9_]*. An unclosed ${ is an error, and so
// is nesting more than 16 deep. A nil lookup means no variable is set. All
// problems in s are returned, joined; no message contains a looked-up value,
// because those are often secrets.
func Expand(s string, lookup func(name string) (string, bool)) (string, error) {
	out, problems := expand(s, lookup)
	if len(problems) == 0 {
		return out, nil
	}
	errs := make([]error, len(problems))
	for i, p := range problems {
		errs[i] = errors.New(p)
	}
	return "", errors.Join(errs...)
}

// expand does the work of Expand and returns problems as messages, so the
// Decoder can file each one as its own positioned Error.
func expand(s string, lookup func(string) (string, bool)) (string, []string) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	x := &expander{s: s, lookup: lookup}
	var b strings.Builder
	x.text(&b, 0, 0, true)
	return b.String(), x.problems
}

// expander is one run of expand over s: a recursive descent in which a
// default is text, and text holds references.
type expander struct {
	s        string
	lookup   func(string) (string, bool)
	problems []string
	unclosed bool // reported already: every enclosing reference is unclosed too
}

// text expands s from i into b: to the end of s at depth 0, or, inside the
// default of a reference (depth > 0), up to the "}" that ends it. It returns
// the index where it stopped (that "}", or len(s)). With eval false the text
// is a default that is not used: it is only checked, and nothing is looked
// up.
func (x *expander) text(b *strings.Builder, i, depth int, eval bool) int {
	s := x.s
	for i < len(s) {
		c := s[i]
		switch {
		case c == '}' && depth > 0:
			return i
		case c != '$' || i+1 == len(s):
			b.WriteByte(c)
			i++
		case s[i+1] == '$':
			b.WriteByte('$')
			i += 2
		case s[i+1] == '{':
			i = x.reference(b, i, depth, eval)
		default:
			b.WriteByte('$')
			i++
		}
	}
	return i
}

// reference expands the reference that starts at s[i] ("${") into b and
// returns the index just after it.
func (x *expander) reference(b *strings.Builder, i, depth int, eval bool) int {
	s := x.s
	j := i + 2
	for j < len(s) && isNameByte(s[j]) {
		j++
	}
	name := s[i+2 : j]
	hasDefault := strings.HasPrefix(s[j:], ":-")
	if !IsVarName(name) || !hasDefault && (j == len(s) || s[j] != '}') {
		return x.unsupported(i)
	}
	if hasDefault && depth+1 > maxNesting {
		end, ok := x.closing(i)
		if ok {
			x.problems = append(x.problems, fmt.Sprintf("references nest more than %d deep in the default of ${%s:-…}", maxNesting, name))
		}
		return end
	}
	val, ok := "", false
	if eval && x.lookup != nil {
		val, ok = x.lookup(name)
	}
	if !hasDefault {
		if eval && !ok {
			x.problems = append(x.problems, fmt.Sprintf("environment variable %q is not set (use ${%s:-default} for a fallback)", name, name))
		}
		b.WriteString(val)
		return j + 1
	}
	useDefault := eval && val == ""
	var def strings.Builder
	end := x.text(&def, j+2, depth+1, useDefault)
	if end == len(s) {
		x.reportUnclosed()
		return end
	}
	if useDefault {
		b.WriteString(def.String())
	} else {
		b.WriteString(val)
	}
	return end + 1
}

// unsupported reports the reference at s[i], which is not ${NAME} or
// ${NAME:-default}, quoting it whole (it is text from the file, never a
// looked-up value), and returns the index after it.
func (x *expander) unsupported(i int) int {
	end, ok := x.closing(i)
	if ok {
		x.problems = append(x.problems, fmt.Sprintf("unsupported reference %q: use ${NAME} or ${NAME:-default}, where NAME is letters, digits and _", x.s[i:end]))
	}
	return end
}

// closing returns the index just after the "}" that closes the reference
// at s[i], counting the references nested in it; without one it reports
// the reference unclosed and returns (len(s), false).
func (x *expander) closing(i int) (int, bool) {
	s := x.s
	open := 0
	for j := i; j < len(s); j++ {
		switch {
		case s[j] == '$' && j+1 < len(s) && s[j+1] == '$':
			j++
		case s[j] == '$' && j+1 < len(s) && s[j+1] == '{':
			open++
			j++
		case s[j] == '}':
			open--
			if open == 0 {
				return j + 1, true
			}
		}
	}
	x.reportUnclosed()
	return len(s), false
}

// reportUnclosed reports an unclosed "${" once: when an inner reference
// runs to the end of s, so do the ones around it.
func (x *expander) reportUnclosed() {
	if !x.unclosed {
		x.unclosed = true
		x.problems = append(x.problems, `unclosed "${": add the closing "}", or write "$$" for a literal "$"`)
	}
}

func isNameByte(c byte) bool {
	return c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
}

// IsVarName reports whether name can name an environment variable:
// [A-Za-z_][A-Za-z0-9_]*. A config key that names one uses it to tell a
// pasted secret from a name.
func IsVarName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_', 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// shellVars are variables every shell sets: a name like one gets a
// prefix from VarName, so that its reference never reads the user's PATH
// or HOME.
var shellVars = []string{"PATH", "HOME", "USER", "SHELL", "PWD", "TMPDIR", "LANG", "TERM", "HOST", "HOSTNAME", "LOGNAME"}

// ShellVar reports whether name, in any case, is one of the variables
// every shell sets (PATH, HOME).
func ShellVar(name string) bool { return slices.Contains(shellVars, strings.ToUpper(name)) }

// VarName is the environment variable a value named name (a registry
// input, a header) is read from: upper case, each character outside
// [A-Z0-9_] an underscore, prefixed MCP_ when it would be empty, start
// with a digit or be a ShellVar.
func VarName(name string) string {
	v := strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z':
			return r - 'a' + 'A'
		case 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '_':
			return r
		}
		return '_'
	}, strings.Trim(name, "-"))
	if v == "" || v[0] >= '0' && v[0] <= '9' || ShellVar(v) {
		v = "MCP_" + v
	}
	return v
}
