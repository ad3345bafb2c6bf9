package gatewayauth

import (
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// argKeys returns the names of raw's top-level members, sorted and
// without repeats; nil when raw is not a JSON object. It reads the names
// without decoding the values (the audit's default, on every call's path):
// the same as unmarshalling into a map, at a fraction of the allocations.
func argKeys(raw json.RawMessage) []string {
	i := skipSpace(raw, 0)
	if i == len(raw) || raw[i] != '{' || !json.Valid(raw) {
		return nil
	}
	keys := []string{}
	depth, expectKey := 0, false
	for ; i < len(raw); i++ {
		switch c := raw[i]; c {
		case '{', '[':
			depth++
			expectKey = depth == 1
		case '}', ']':
			depth--
		case ',':
			expectKey = depth == 1
		case '"':
			end := stringEnd(raw, i)
			if expectKey {
				keys = append(keys, memberName(raw[i:end+1]))
				expectKey = false
			}
			i = end
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd is the index of the quote that ends the string starting at
// b[start] (valid JSON).
func stringEnd(b []byte, start int) int {
	for i := start + 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(b) - 1 // untested: b is valid JSON
}

// memberName decodes a quoted name: as is when it holds no escape and is
// valid UTF-8 (nearly always), else as encoding/json decodes it.
func memberName(quoted []byte) string {
	inner := quoted[1 : len(quoted)-1]
	if !slices.Contains(inner, '\\') && utf8.Valid(inner) {
		return string(inner)
	}
	var s string
	json.Unmarshal(quoted, &s) // valid JSON: cannot fail
	return s
}
