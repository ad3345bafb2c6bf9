package projection

import (
	"bytes"
	"encoding/json"
	"iter"
	"unicode/utf8"
)

// This file is a minimal zero-copy walker over JSON that json.Valid has
// already accepted: every function here assumes valid input and hands out
// sub-slices of it, so the canonical value keeps the received bytes and
// large payloads (base64 images) are never copied just to be looked at.

// skipSpace returns the index of the first non-whitespace byte at or after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// valueEnd returns the index just past the value that starts at b[i].
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = stringEnd(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i // unreachable for valid JSON: every bracket is closed
	default: // number, true, false, null
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return i
			}
			i++
		}
		return i
	}
}

// stringEnd returns the index just past the string token that starts at b[i].
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i // unreachable for valid JSON: every string is closed
}

// members yields the raw key token (quotes included) and the raw value of
// each member of the object obj, in document order.
func members(obj []byte) iter.Seq2[[]byte, []byte] {
	return func(yield func(key, val []byte) bool) {
		i := skipSpace(obj, 1)
		if obj[i] == '}' {
			return
		}
		for {
			i = skipSpace(obj, i)
			kEnd := stringEnd(obj, i)
			key := obj[i:kEnd]
			i = skipSpace(obj, skipSpace(obj, kEnd)+1) // past ':'
			vEnd := valueEnd(obj, i)
			if !yield(key, obj[i:vEnd]) {
				return
			}
			i = skipSpace(obj, vEnd)
			if obj[i] == '}' {
				return
			}
			i++ // ','
		}
	}
}

// elements yields the raw value of each element of the array arr, in order.
func elements(arr []byte) iter.Seq[[]byte] {
	return func(yield func(val []byte) bool) {
		i := skipSpace(arr, 1)
		if arr[i] == ']' {
			return
		}
		for {
			i = skipSpace(arr, i)
			vEnd := valueEnd(arr, i)
			if !yield(arr[i:vEnd]) {
				return
			}
			i = skipSpace(arr, vEnd)
			if arr[i] == ']' {
				return
			}
			i++ // ','
		}
	}
}

// keyIs reports whether the key token decodes to name. Keys are compared
// after unescaping, as JSON.parse does ("\u0074ype" is "type"), and exactly
// (unlike encoding/json's case-insensitive struct fields).
func keyIs(key []byte, name string) bool {
	inner := key[1 : len(key)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner) == name
	}
	return decodeString(key) == name
}

// isString reports whether the value v is a JSON string.
func isString(v []byte) bool { return len(v) > 0 && v[0] == '"' }

// decodeString returns the value of the string token tok. Invalid UTF-8 and
// lone surrogates become U+FFFD, as with encoding/json.
func decodeString(tok []byte) string {
	inner := tok[1 : len(tok)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner)
	}
	var s string
	_ = json.Unmarshal(tok, &s) // cannot fail: tok is a string token of validated JSON
	return s
}

// compact returns the value v with insignificant whitespace removed and
// everything else (key order, number text, string escapes) as received.
func compact(v []byte) string {
	var buf bytes.Buffer
	_ = json.Compact(&buf, v) // cannot fail: v is a value of validated JSON
	return buf.String()
}

// appendJSONString appends s as a JSON string. Unlike json.Marshal it leaves
// <, > and & alone, as JSON.stringify does, so legacy text reads the same.
func appendJSONString(dst []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // cannot fail: every Go string encodes
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// The walkers below are the same scanner, exported for internal/sdkwire,
// which picks JSON-RPC envelopes and tools/list pages apart with it (one
// JSON scanner in the bridge, not two). Their contract is the unexported
// forms': the input must be JSON that json.Valid accepts, and they hand out
// sub-slices of it.

// Members yields the raw key token (quotes included) and the raw value of
// each member of the object obj, in document order.
func Members(obj []byte) iter.Seq2[[]byte, []byte] { return members(obj) }

// Elements yields the raw value of each element of the array arr, in order.
func Elements(arr []byte) iter.Seq[[]byte] { return elements(arr) }

// KeyIs reports whether the key token decodes to name, compared exactly
// after unescaping.
func KeyIs(key []byte, name string) bool { return keyIs(key, name) }

// DecodeString returns the value of the string token tok; invalid UTF-8 and
// lone surrogates become U+FFFD, as with encoding/json.
func DecodeString(tok []byte) string { return decodeString(tok) }

// Depth returns the deepest nesting of objects and arrays in the valid JSON
// b: 0 for a scalar, 1 for {} or [1], and so on. Brackets inside strings do
// not count.
func Depth(b []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = stringEnd(b, i) - 1
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			depth--
		}
	}
	return deepest
}

// PlainString returns the value of the string token tok when it can be
// taken verbatim: no escapes, valid UTF-8 (encoding/json and the SDK's
// decoder replace invalid bytes with U+FFFD).
func PlainString(tok []byte) (string, bool) {
	if tok[0] != '"' {
		return "", false
	}
	inner := tok[1 : len(tok)-1]
	if bytes.IndexByte(inner, '\\') >= 0 || !utf8.Valid(inner) {
		return "", false
	}
	return string(inner), true
}
