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
	var top map[string]json.RawMessage
	if json.Unmarshal(result, &top) != nil {
		return nil, false
	}
	var scope string
	if json.Unmarshal(top["cacheScope"], &scope) != nil || scope != "private" {
		return nil, false
	}
	var ttl float64
	if json.Unmarshal(top["ttlMs"], &ttl) != nil || ttl <= 0 {
		return nil, false // the SDK keeps nothing without a positive ttlMs
	}
	top["ttlMs"] = json.RawMessage("0")
	out, err := json.Marshal(top)
	if err != nil {
		return nil, false
	}
	return out, true
}
