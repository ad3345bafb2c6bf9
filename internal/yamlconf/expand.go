package yamlconf

import (
	"errors"
	"fmt"
	"strings"
)

// Expand substitutes environment references in s:
//
//   - ${VAR} is the value of VAR; an unset VAR is an error (set but empty is
//     fine);
//   - ${VAR:-default} is the value of VAR, or default when VAR is unset or
//     empty; default is taken literally (no nested expansion);
//   - $$ is a literal $;
//   - a $ followed by anything else is a literal $.
//
// VAR must match [A-Za-z_][A-Za-z0-9_]*. An unclosed ${ is an error. A nil
// lookup means no variable is set. All problems in s are returned, joined;
// no message contains a looked-up value, because those are often secrets.
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
	var b strings.Builder
	var problems []string
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' || i+1 == len(s) {
			b.WriteByte(c)
			i++
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i += 2
			continue
		case '{':
		default:
			b.WriteByte('$')
			i++
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			problems = append(problems, `unclosed "${": add the closing "}", or write "$$" for a literal "$"`)
			break
		}
		body := s[i+2 : i+2+end]
		i += 2 + end + 1
		name, def, hasDef := strings.Cut(body, ":-")
		if !validVarName(name) {
			// body is text from the file, never a looked-up value.
			problems = append(problems, fmt.Sprintf("unsupported reference %q: use ${NAME} or ${NAME:-default}, where NAME is letters, digits and _", "${"+body+"}"))
			continue
		}
		val, ok := "", false
		if lookup != nil {
			val, ok = lookup(name)
		}
		switch {
		case hasDef && val == "":
			b.WriteString(def)
		case !ok:
			problems = append(problems, fmt.Sprintf("environment variable %q is not set (use ${%s:-default} for a fallback)", name, name))
		default:
			b.WriteString(val)
		}
	}
	return b.String(), problems
}

func validVarName(name string) bool {
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
