package audit

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/mcpbridge/mcpbridge/internal/textcut"
)

// What a line may hold of what callers control (a client's name, a
// resource's URI, a tool's arguments and their keys): every line stays
// far under the 1 MiB lastHash reads back and the 16 MiB a reader takes,
// even when each of its bytes is written as a six-byte escape.
const (
	maxFieldBytes = 1 << 10  // each string field, a reason four times that
	maxArgsBytes  = 32 << 10 // args: full; larger ones are hashed
	maxArgKeys    = 256
	maxArgKeyLen  = 128
)

// cutMark ends a field cut to its bound.
const cutMark = "…"

// ArgsHashPrefix starts the argsHash of arguments too large to write
// whole (args: full): the SHA-256 of their bytes, where args: hash writes
// an HMAC under a salt of the process's.
const ArgsHashPrefix = "sha256:"

// bound cuts e's fields to what a line may hold.
func bound(e *Entry) {
	for _, f := range []*string{&e.Identity, &e.Client, &e.Session, &e.Method, &e.Name, &e.Server, &e.TraceID, &e.ArgsHash, &e.Call, &e.Parent} {
		*f = cut(*f, maxFieldBytes)
	}
	e.Reason = cut(e.Reason, 4*maxFieldBytes)
	if len(e.Args) > maxArgsBytes {
		sum := sha256.Sum256(e.Args)
		e.Args, e.ArgsHash = nil, ArgsHashPrefix+hex.EncodeToString(sum[:])
	}
	if len(e.ArgKeys) > maxArgKeys || longKey(e.ArgKeys) {
		keys := make([]string, 0, min(len(e.ArgKeys), maxArgKeys+1))
		for _, k := range e.ArgKeys[:min(len(e.ArgKeys), maxArgKeys)] {
			keys = append(keys, cut(k, maxArgKeyLen))
		}
		if len(e.ArgKeys) > maxArgKeys {
			keys = append(keys, cutMark)
		}
		e.ArgKeys = keys
	}
}

func longKey(keys []string) bool {
	for _, k := range keys {
		if len(k) > maxArgKeyLen {
			return true
		}
	}
	return false
}

// cut is s, or its first bytes and cutMark within n bytes.
func cut(s string, n int) string { return textcut.Marked(s, n, cutMark) }
