package naming

import (
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"
)

// MaxLen is the longest public name, the function-name limit the model APIs
// impose.
const MaxLen = 64

const (
	prefix    = "mcp__"
	separator = "__"
	hashLen   = 12
	// keepLen is how much of the normalized name a hashed name keeps, so that
	// keepLen + len("_") + hashLen == MaxLen.
	keepLen = MaxLen - 1 - hashLen
	// hashStack is the size of the on-stack buffer for the hash input; longer
	// identities (rare) fall back to the heap.
	hashStack = 256
)

// Public returns the model-visible name of the tool rawName of the server
// serverName, exactly as the original bridge computes it (docs/upstream.md §2.2):
//
//   - joined = "mcp__" + serverName + "__" + rawName;
//   - if every character of joined is in [A-Za-z0-9_-] and joined is at most
//     MaxLen long, joined is the name;
//   - otherwise the name is the first 51 characters of joined with every
//     disallowed UTF-16 code unit replaced by '_', then '_' and the first 12
//     lowercase hex digits of SHA-256(serverName + "\x00" + rawName).
//
// JavaScript counts UTF-16 code units, so a rune below U+10000 becomes one '_'
// and a rune at or above U+10000 (an emoji) becomes two. Go strings can also
// hold invalid UTF-8, which a JavaScript string cannot: each invalid byte
// becomes one '_' (the way Go's decoder turns it into one U+FFFD), and the hash
// covers the bytes as given.
//
// The result always satisfies Valid. Public is a pure function, safe for
// concurrent use; a clean short name costs one allocation.
func Public(serverName, rawName string) string {
	if !Hashed(serverName, rawName) {
		return prefix + serverName + separator + rawName
	}
	return hashed(serverName, rawName)
}

// Valid reports whether s fits the function-name contract of the model APIs:
// 1 to MaxLen characters, each in [A-Za-z0-9_-].
func Valid(s string) bool {
	return len(s) >= 1 && len(s) <= MaxLen && clean(s)
}

// Hashed reports whether Public(serverName, rawName) carries the hash suffix,
// that is whether the joined name was lossy to normalize or longer than
// MaxLen. Callers use it to tell a clean name that merely looks hashed from a
// hashed one (docs/upstream.md §2.4 C1).
func Hashed(serverName, rawName string) bool {
	return len(prefix)+len(serverName)+len(separator)+len(rawName) > MaxLen ||
		!clean(serverName) || !clean(rawName)
}

// hashed builds the truncated, normalized name with its hash suffix in a
// stack buffer, so the only allocation is the returned string.
func hashed(serverName, rawName string) string {
	var buf [MaxLen]byte
	b := appendNormalized(buf[:0], prefix)
	b = appendNormalized(b, serverName)
	b = appendNormalized(b, separator)
	b = appendNormalized(b, rawName)
	sum := identityHash(serverName, rawName)
	b = append(b, '_')
	n := len(b)
	b = b[:n+hashLen]
	hex.Encode(b[n:], sum[:hashLen/2])
	return string(b)
}

// appendNormalized appends the normalization of s to dst, one '_' per
// disallowed UTF-16 code unit, stopping once dst holds keepLen characters.
func appendNormalized(dst []byte, s string) []byte {
	for i := 0; i < len(s) && len(dst) < keepLen; {
		c := s[i]
		if c < utf8.RuneSelf {
			if !allowed(c) {
				c = '_'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		dst = append(dst, '_')
		// Above the BMP a rune is a surrogate pair: two code units, two '_'.
		if r >= 0x10000 && len(dst) < keepLen {
			dst = append(dst, '_')
		}
	}
	return dst
}

// identityHash is SHA-256 of serverName, a NUL byte and rawName: the raw,
// un-normalized identity, so lossy names that normalize alike differ.
func identityHash(serverName, rawName string) [sha256.Size]byte {
	var stack [hashStack]byte
	b := stack[:0]
	if need := len(serverName) + 1 + len(rawName); need > len(stack) {
		b = make([]byte, 0, need)
	}
	b = append(b, serverName...)
	b = append(b, 0)
	b = append(b, rawName...)
	return sha256.Sum256(b)
}

// clean reports whether every byte of s is an allowed name character.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		if !allowed(s[i]) {
			return false
		}
	}
	return true
}

// allowed reports whether c may appear in a public name.
func allowed(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}
