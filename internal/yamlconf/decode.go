package yamlconf

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Decoder collects the problems found while walking one document. It is not
// safe for concurrent use; use one per document.
type Decoder struct {
	lookup func(string) (string, bool)
	errs   Errors
	failed map[string]bool
	// quoted holds, by path, the index in errs of a "quote it" problem
	// (String of a number or boolean), which a later problem at that path
	// replaces: the quoted text was checked and would not do either.
	quoted map[string]int
}

// NewDecoder returns a Decoder whose Expand… getters resolve variables with
// lookup. A nil lookup means no variable is set, so tests and callers never
// read the process environment by accident.
func NewDecoder(lookup func(name string) (string, bool)) *Decoder {
	return &Decoder{lookup: lookup, failed: map[string]bool{}, quoted: map[string]int{}}
}

// Errorf records a problem at n (which may be nil for an unknown position)
// and marks path as failed. It replaces String's "quote it" problem at
// path, if any: the caller found the quoted text wrong too, and its
// message says what the field takes.
func (d *Decoder) Errorf(n *yaml.Node, path, format string, args ...any) {
	e := &Error{Path: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	d.failed[path] = true
	if i, ok := d.quoted[path]; ok {
		delete(d.quoted, path)
		d.errs[i] = e
		return
	}
	d.errs = append(d.errs, e)
}

// Failed reports whether a problem was recorded for path, so later semantic
// checks can skip a value that already failed to decode instead of piling a
// second, confusing error on it.
//
// A value whose only problem is that it needs quotes (String) has not
// failed: what it says is yet to be checked.
func (d *Decoder) Failed(path string) bool {
	_, quoted := d.quoted[path]
	return d.failed[path] && !quoted
}

// Err returns every recorded problem as Errors in document order, or nil.
func (d *Decoder) Err() error {
	if len(d.errs) == 0 {
		return nil
	}
	es := slices.Clone(d.errs)
	slices.SortStableFunc(es, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	return es
}

// Expand expands s like the package-level Expand, recording each problem at
// n under path. ok is false when there was a problem.
func (d *Decoder) Expand(n *yaml.Node, path, s string) (string, bool) {
	out, problems := expand(s, d.lookup)
	for _, p := range problems {
		d.Errorf(n, path, "%s", p)
	}
	return out, len(problems) == 0
}

// Map is a strict view of one YAML mapping: duplicate and non-string keys are
// reported when it is built, unknown keys by Reject.
type Map struct {
	d     *Decoder
	node  *yaml.Node
	path  string
	keys  []string
	key   map[string]*yaml.Node
	value map[string]*yaml.Node
}

// Map returns a strict view of the mapping n, whose path is path. A nil or
// null n yields (nil, false) without a problem, so the caller decides between
// "required" and "default"; anything else that is not a mapping is recorded
// as a problem and also yields (nil, false).
func (d *Decoder) Map(n *yaml.Node, path string) (*Map, bool) {
	n = Resolve(n)
	if IsNull(n) {
		return nil, false
	}
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, path, "must be a mapping of keys to values, got %s", Describe(n))
		return nil, false
	}
	m := &Map{d: d, node: n, path: path, key: map[string]*yaml.Node{}, value: map[string]*yaml.Node{}}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := Resolve(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.Errorf(k, path, "keys must be plain strings, got %s", Describe(k))
			continue
		}
		if k.Value == "<<" && k.ShortTag() == "!!merge" {
			d.Errorf(k, path, "merge keys (<<) are not supported; write the keys out")
			continue
		}
		if first, dup := m.key[k.Value]; dup {
			d.Errorf(k, JoinKey(path, k.Value), "duplicate key %q (first defined at line %d)", k.Value, first.Line)
			continue
		}
		m.keys = append(m.keys, k.Value)
		m.key[k.Value] = k
		m.value[k.Value] = Resolve(v)
	}
	return m, true
}

// Node returns the mapping node itself.
func (m *Map) Node() *yaml.Node { return m.node }

// Keys returns the keys in document order.
func (m *Map) Keys() []string { return slices.Clone(m.keys) }

// Value returns the value node of key (aliases resolved), or nil if absent.
func (m *Map) Value(key string) *yaml.Node { return m.value[key] }

// Has reports whether key is present with a non-null value.
func (m *Map) Has(key string) bool { return !IsNull(m.value[key]) }

// Path returns the path of key's value.
func (m *Map) Path(key string) string { return JoinKey(m.path, key) }

// Errorf records a problem about key at its value (or at the mapping when the
// key is absent, as for a missing required key).
func (m *Map) Errorf(key, format string, args ...any) {
	n := m.value[key]
	if n == nil {
		n = m.node
	}
	m.d.Errorf(n, m.Path(key), format, args...)
}

// Reject records `unknown key "k"` for every key not in allowed, with a
// suggestion when an allowed key is a likely typo of it.
func (m *Map) Reject(allowed ...string) {
	m.RejectFunc(allowed, func(key string) string { return unknownKey(key, allowed) })
}

// RejectListing is Reject whose message also lists the valid keys, for a
// mapping whose keys a reader cannot guess from a typo's suggestion (a key
// that does not exist yet, such as a policy rule's "deny" before it did).
func (m *Map) RejectListing(allowed ...string) {
	m.RejectFunc(allowed, func(key string) string {
		return unknownKey(key, allowed) + "; valid keys: " + strings.Join(allowed, ", ")
	})
}

func unknownKey(key string, allowed []string) string {
	return fmt.Sprintf("unknown key %q", key) + DidYouMean(key, allowed)
}

// DidYouMean is ` (did you mean "K"?)` for the key K of allowed that key
// is a typo of (Suggest), or "" when none is close: the end of a message
// about an unknown key.
func DidYouMean(key string, allowed []string) string {
	if s := Suggest(key, allowed); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// RejectFunc is Reject with the caller's wording, for keys whose message is
// fixed by a contract (upstream's "is not a reconnect option").
func (m *Map) RejectFunc(allowed []string, msg func(key string) string) {
	for _, k := range m.keys {
		if !slices.Contains(allowed, k) {
			m.d.Errorf(m.key[k], m.Path(k), "%s", msg(k))
		}
	}
}

// String returns the string value of key. Absent or null yields ("", false)
// silently; a non-string yields ("", false) and a problem.
func (m *Map) String(key string) (string, bool) {
	return m.d.String(m.value[key], m.Path(key))
}

// Written is key's scalar text as written, before ${VAR} expansion: what
// an error may quote, where the expanded value may hold a credential.
func (m *Map) Written(key string) string {
	if n := m.value[key]; n != nil && n.Kind == yaml.ScalarNode {
		return n.Value
	}
	return ""
}

// ExpandString is String followed by ${VAR} expansion.
func (m *Map) ExpandString(key string) (string, bool) {
	return m.d.ExpandString(m.value[key], m.Path(key))
}

// Bool returns the boolean value of key (only true or false; yes/on are
// strings in YAML 1.2 and rejected). Absent or null yields (false, false).
func (m *Map) Bool(key string) (bool, bool) {
	n := m.value[key]
	if IsNull(n) {
		return false, false
	}
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		m.Errorf(key, "must be true or false, got %s", Describe(n))
		return false, false
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		// An explicit tag on a non-boolean, like !!bool maybe.
		m.Errorf(key, "must be true or false, got %s", Describe(n))
		return false, false
	}
	return b, true
}

// Int returns the integer value of key, which must lie in min..max. Floats
// (1.5, 1e3) and strings ("10") are rejected. Absent or null yields (0, false).
func (m *Map) Int(key string, min, max int64) (int64, bool) {
	n := m.value[key]
	if IsNull(n) {
		return 0, false
	}
	v, err := ScalarInt(n)
	if err == nil && (v < min || v > max) {
		err = fmt.Errorf("must be between %d and %d, got %d", min, max, v)
	}
	if err != nil {
		m.Errorf(key, "%v", err)
		return 0, false
	}
	return v, true
}

// StringList returns the list of strings at key. Absent or null yields
// (nil, false); problems are recorded per element (path key[i]).
func (m *Map) StringList(key string) ([]string, bool) {
	return m.stringList(key, false)
}

// ExpandStringList is StringList with ${VAR} expansion of every element.
func (m *Map) ExpandStringList(key string) ([]string, bool) {
	return m.stringList(key, true)
}

func (m *Map) stringList(key string, expand bool) ([]string, bool) {
	n := m.value[key]
	if IsNull(n) {
		return nil, false
	}
	if n.Kind != yaml.SequenceNode {
		m.Errorf(key, "must be a list of strings, got %s", Describe(n))
		return nil, false
	}
	before := len(m.d.errs)
	out := make([]string, 0, len(n.Content))
	for i, item := range n.Content {
		p := fmt.Sprintf("%s[%d]", m.Path(key), i)
		var s string
		var good bool
		if expand {
			s, good = m.d.ExpandString(item, p)
		} else {
			s, good = m.d.String(item, p)
		}
		if !good && !m.d.Failed(p) {
			m.d.Errorf(Resolve(item), p, "must be a string, got null")
		}
		out = append(out, s)
	}
	if len(m.d.errs) > before {
		return nil, false
	}
	return out, true
}

// StringMap returns the mapping of string keys to string values at key.
// Absent or null yields (nil, false). A value that is not a string (PORT: 8080)
// is a problem at that value.
func (m *Map) StringMap(key string) (map[string]string, bool) {
	return m.stringMap(key, false)
}

// ExpandStringMap is StringMap with ${VAR} expansion of every value (never of
// keys).
func (m *Map) ExpandStringMap(key string) (map[string]string, bool) {
	return m.stringMap(key, true)
}

func (m *Map) stringMap(key string, expand bool) (map[string]string, bool) {
	n := m.value[key]
	if IsNull(n) {
		return nil, false
	}
	if n.Kind != yaml.MappingNode {
		m.Errorf(key, "must be a mapping of strings to strings, got %s", Describe(n))
		return nil, false
	}
	before := len(m.d.errs)
	sub, _ := m.d.Map(n, m.Path(key))
	out := make(map[string]string, len(sub.keys))
	for _, k := range sub.keys {
		p := sub.Path(k)
		var s string
		var good bool
		if expand {
			s, good = m.d.ExpandString(sub.value[k], p)
		} else {
			s, good = m.d.String(sub.value[k], p)
		}
		if !good && !m.d.Failed(p) {
			m.d.Errorf(sub.value[k], p, "must be a string, got null")
		}
		out[k] = s
	}
	if len(m.d.errs) > before {
		return nil, false
	}
	return out, true
}

// String returns the string scalar n (at path). Null or nil yields
// ("", false) silently; anything else that is not a string is recorded.
//
// A number or boolean (taskLease: 5) is recorded as needing quotes, and
// its text returned with ok true, for the caller to check as it checks a
// string: a problem it then finds at path replaces the quoting one (Errorf),
// so "quote it" is said only when the quoted text would do, and otherwise
// the caller's message, which says what the field takes.
func (d *Decoder) String(n *yaml.Node, path string) (string, bool) {
	n = Resolve(n)
	if IsNull(n) {
		return "", false
	}
	// A plain date (protocolVersion: 2025-11-25) resolves to !!timestamp in
	// yaml.v3, but its text is what the user meant.
	if n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!str" || n.ShortTag() == "!!timestamp") {
		return n.Value, true
	}
	msg := fmt.Sprintf("must be a string, got %s", Describe(n))
	switch n.ShortTag() {
	case "!!int", "!!float", "!!bool":
		d.Errorf(n, path, `%s (quote it: "%s")`, msg, n.Value)
		d.quoted[path] = len(d.errs) - 1
		return n.Value, true
	}
	d.Errorf(n, path, "%s", msg)
	return "", false
}

// ExpandString is String followed by ${VAR} expansion.
func (d *Decoder) ExpandString(n *yaml.Node, path string) (string, bool) {
	s, ok := d.String(n, path)
	if !ok {
		return "", false
	}
	return d.Expand(Resolve(n), path, s)
}

// ScalarInt parses an integer scalar. The error says what was found instead
// (without a path), so callers can word their own messages around it.
func ScalarInt(n *yaml.Node) (int64, error) {
	n = Resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return 0, fmt.Errorf("must be an integer, got %s", Describe(n))
	}
	switch n.ShortTag() {
	case "!!int":
		digits := strings.TrimLeft(n.Value, "+-")
		if len(digits) > 1 && digits[0] == '0' && isDecimal(digits) {
			// yaml.v3 reads 017 as octal 15, YAML 1.2 as 17; refuse to guess.
			return 0, fmt.Errorf("must not have a leading zero, got %s (write %s, or 0o%s for octal)", n.Value, strings.TrimLeft(digits, "0"), strings.TrimLeft(digits, "0"))
		}
		var v int64
		if err := n.Decode(&v); err != nil {
			if isDecimal(n.Value) {
				return 0, fmt.Errorf("is out of range, got %s", n.Value)
			}
			return 0, fmt.Errorf("must be an integer, got a malformed !!int value")
		}
		return v, nil
	case "!!float":
		if isDecimal(n.Value) {
			// An integer literal too large for int64; yaml.v3 tags it !!float.
			return 0, fmt.Errorf("is out of range, got %s", n.Value)
		}
		return 0, fmt.Errorf("must be an integer, got %s", Describe(n))
	case "!!str":
		if _, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
			return 0, fmt.Errorf("must be an integer, got a string (remove the quotes)")
		}
	}
	return 0, fmt.Errorf("must be an integer, got %s", Describe(n))
}

// ScalarFloat parses a numeric scalar (integer or float, including .inf and
// .nan) for callers that check ranges themselves.
func ScalarFloat(n *yaml.Node) (float64, bool) {
	n = Resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return 0, false
	}
	switch n.ShortTag() {
	case "!!int", "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return 0, false // an explicit tag on a non-number, like !!int foo
		}
		return f, true
	}
	return 0, false
}

// Resolve follows aliases (*anchor) to the node they name.
func Resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// IsNull reports whether n is absent, ~, null, or an empty value.
func IsNull(n *yaml.Node) bool {
	n = Resolve(n)
	return n == nil || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// Describe names what n is, for "got …" in messages. Numbers and booleans are
// shown literally; strings never are, because they may be secrets.
func Describe(n *yaml.Node) string {
	n = Resolve(n)
	if IsNull(n) {
		return "null"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.DocumentNode:
		return "a document"
	}
	switch tag := n.ShortTag(); tag {
	case "!!str":
		return "a string"
	case "!!int":
		return "the integer " + n.Value
	case "!!float":
		return "the number " + n.Value
	case "!!bool":
		return "the boolean " + n.Value
	case "!!timestamp":
		return "a date"
	default:
		return fmt.Sprintf("a value tagged %s (custom tags are not supported)", tag)
	}
}

// JoinKey appends key to path: path.key for identifier-like keys, and
// path["key"] for others, so a path is never ambiguous.
func JoinKey(path, key string) string {
	if isIdent(key) {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	return path + "[" + strconv.Quote(key) + "]"
}

// isIdent reports whether s matches [A-Za-z_][A-Za-z0-9_-]*.
func isIdent(s string) bool {
	if s == "" || s[0] == '-' || '0' <= s[0] && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// isDecimal reports whether s matches [-+]?[0-9][0-9_]*: an integer literal.
func isDecimal(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	if s == "" || s[0] < '0' || s[0] > '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] == '_' || '0' <= s[i] && s[i] <= '9') {
			return false
		}
	}
	return true
}

// Suggest returns the candidate closest to key within edit distance 2
// (ignoring case), or "" if none is that close. A candidate must keep at least
// half of its letters, so a short key is not "corrected" into an unrelated one.
// Without one that close, the one candidate key begins (of three letters
// or more: "demo" for "demo-server") is it: a name cut short is as common
// a slip as a typo.
func Suggest(key string, candidates []string) string {
	best, bestD := "", 3
	lk := strings.ToLower(key)
	for _, c := range candidates {
		if d := distance(lk, strings.ToLower(c)); d < bestD && 2*d <= len(c) {
			best, bestD = c, d
		}
	}
	if best == "" && len(lk) >= 3 {
		return onlyPrefixed(lk, candidates)
	}
	return best
}

// onlyPrefixed is the one candidate that starts with lower (ignoring
// case), or "" when none or several do.
func onlyPrefixed(lower string, candidates []string) string {
	found := ""
	for _, c := range candidates {
		if strings.HasPrefix(strings.ToLower(c), lower) {
			if found != "" && found != c {
				return ""
			}
			found = c
		}
	}
	return found
}

// distance is the edit distance between a and b, over bytes (keys are
// ASCII), counting a swap of two neighbours as one edit (optimal string
// alignment), the commonest typo: "audti" is one edit from "audit".
func distance(a, b string) int {
	rows := make([][]int, len(a)+1)
	for i := range rows {
		rows[i] = make([]int, len(b)+1)
		rows[i][0] = i
	}
	for j := range rows[0] {
		rows[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			rows[i][j] = min(rows[i-1][j]+1, rows[i][j-1]+1, rows[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				rows[i][j] = min(rows[i][j], rows[i-2][j-2]+1)
			}
		}
	}
	return rows[len(a)][len(b)]
}

// Locate returns the node at path below root, where path is written the way
// this package writes paths (config.env.PORT, config.env["A.B"],
// config.args[1]). When path leads nowhere it returns the deepest node it
// reached, so an error can still point close to the problem; nil only for a
// nil root.
func Locate(root *yaml.Node, path string) *yaml.Node {
	n := Resolve(root)
	for path != "" && n != nil {
		var key string
		index := -1
		switch {
		case path[0] == '.':
			path = path[1:]
			continue
		case path[0] == '[':
			end := strings.IndexByte(path, ']')
			if q, err := strconv.QuotedPrefix(path[1:]); err == nil {
				key, _ = strconv.Unquote(q)
				end = 1 + len(q)
			} else if end < 0 {
				return n
			} else if i, err := strconv.Atoi(path[1:end]); err == nil {
				index = i
			} else {
				return n
			}
			if end >= len(path) || path[end] != ']' {
				return n
			}
			path = path[end+1:]
		default:
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			key, path = path[:end], path[end:]
		}
		next := child(n, key, index)
		if next == nil {
			return n
		}
		n = next
	}
	return n
}

// child returns the value of key in mapping n, or item index of sequence n.
func child(n *yaml.Node, key string, index int) *yaml.Node {
	switch {
	case index >= 0 && n.Kind == yaml.SequenceNode && index < len(n.Content):
		return Resolve(n.Content[index])
	case index < 0 && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := Resolve(n.Content[i]); k.Kind == yaml.ScalarNode && k.Value == key {
				return Resolve(n.Content[i+1])
			}
		}
	}
	return nil
}
