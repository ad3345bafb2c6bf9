package sdkwire

import (
	"bytes"
	"encoding/json"
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
		return nil, false // the cheap common case: no private scope anywhere
	}
	// The two fields first: the rest of a large result is skipped, not copied.
	var fields struct {
		TTLMs      float64 `json:"ttlMs"`
		CacheScope string  `json:"cacheScope"`
	}
	if json.Unmarshal(result, &fields) != nil || fields.CacheScope != "private" || fields.TTLMs <= 0 {
		return nil, false // the SDK keeps nothing without a positive ttlMs
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(result, &top) != nil {
		return nil, false
	}
	top["ttlMs"] = json.RawMessage("0")
	out, err := json.Marshal(top)
	if err != nil {
		return nil, false
	}
	return out, true
}
