package sdkwire

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/mcpbridge/mcpbridge/internal/projection"
)

// Private results kept out of the SDK's cache (assumption 29 of the
// package doc).
//
// On protocol 2026-07-28 the SDK's client keeps list and resources/read
// results for their ttlMs, keyed by cursor or URI only, whatever their
// cacheScope. One connection of the bridge serves every consumer (each
// gateway session and identity), so a "private" result kept there would
// answer another consumer's request. The SDK is handed such a result with
// ttlMs 0, which it never answers from; the slot keeps it as sent, so the
// consumer still sees the server's ttlMs and cacheScope.

// uncachedPrivate returns result with ttlMs 0 when it is a private result
// the SDK would cache, and false for any other result.
func uncachedPrivate(result json.RawMessage) (json.RawMessage, bool) {
	if !bytes.Contains(result, []byte(`"private"`)) {
		return nil, false // the cheap common case: no private scope anywhere (no encoder escapes ASCII)
	}
	if len(result) == 0 || result[0] != '{' || !json.Valid(result) {
		return nil, false
	}
	// The two fields as the SDK's decoder reads them: a name matched
	// exactly once unescaped (not in another case), the last of a repeated
	// one, null leaving the one before. Only the top level is walked; the
	// rest of a large result is skipped, not copied.
	var ttl float64
	var scope string
	for key, val := range projection.Members(result) {
		if string(val) == "null" {
			continue
		}
		switch {
		case projection.KeyIs(key, "ttlMs"):
			f, err := strconv.ParseFloat(string(val), 64)
			if err != nil {
				return nil, false // the SDK cannot decode the result, and keeps nothing
			}
			ttl = f
		case projection.KeyIs(key, "cacheScope"):
			if val[0] != '"' {
				return nil, false
			}
			scope = projection.DecodeString(val)
		}
	}
	if scope != "private" || ttl <= 0 {
		return nil, false // the SDK keeps nothing without a positive ttlMs
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(result, &top) != nil {
		return nil, false
	}
	top["ttlMs"] = json.RawMessage("0") // unescaped keys: an escaped ttlMs is this one
	out, err := json.Marshal(top)
	if err != nil {
		return nil, false
	}
	return out, true
}
