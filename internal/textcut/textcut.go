// Package textcut cuts text to a byte bound without splitting a
// character: descriptions, log lines, audit fields and messages that a
// peer controls are bounded where they are kept or shown.
package textcut

import "unicode/utf8"

// PeerText bounds a peer's text (a server's error message, what the SDK
// logs of a server's answer, a failed operation's error in a span) where
// the bridge logs, shows or records it: enough to read, never megabytes.
const PeerText = 4 << 10

// Prefix returns the longest prefix of s of at most n bytes that does
// not split a UTF-8 character; s itself when it fits.
func Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Marked is s cut, when it is over n bytes, to a prefix followed by mark,
// the whole within n bytes (the mark alone when n leaves no room).
func Marked(s string, n int, mark string) string {
	if len(s) <= n {
		return s
	}
	return Prefix(s, n-len(mark)) + mark
}

// Peer is a peer's text cut to PeerText, marked "…" where cut.
func Peer(s string) string { return Marked(s, PeerText, "…") }
