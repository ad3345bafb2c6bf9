package sdkwire

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpbridge/mcpbridge/internal/projection"
)

// JSON-RPC message decoding without a JSON decoder (assumption 12 of the
// package doc). jsonrpc.DecodeMessage runs a fresh decoder with a 32 KiB
// buffer over the whole message; here json.Valid checks it and the
// projection's scanner picks the envelope apart. Whatever the scanner does
// not handle itself (an error object, an escaped key or string, an odd id,
// a message nested deeper than the SDK allows) goes to jsonrpc.DecodeMessage,
// so the outcome is the SDK's: FuzzDecodeMessage checks that it is, message
// for message and error for error.

// maxDepth is the SDK's nesting limit for one JSON-RPC message
// (defaultMaxDepth in the SDK's internal/json).
const maxDepth = 1000

// DecodeMessage decodes one JSON-RPC message exactly as
// jsonrpc.DecodeMessage does, without its 32 KiB decoder for the plain
// shapes (assumption 12).
func DecodeMessage(b []byte) (jsonrpc.Message, error) { return decodeMessage(b) }

// DecodeValid is DecodeMessage for b that json.Valid accepts (a frame
// Screen reported valid), without checking it again. b must be valid
// JSON: on anything else its outcome is undefined.
func DecodeValid(b []byte) (jsonrpc.Message, error) { return decodeValid(b) }

// decodeMessage decodes one JSON-RPC message exactly as
// jsonrpc.DecodeMessage does.
func decodeMessage(b []byte) (jsonrpc.Message, error) {
	if !json.Valid(b) {
		return jsonrpc.DecodeMessage(b) // the SDK's own error
	}
	return decodeValid(b)
}

// decodeValid is decodeMessage for b that json.Valid accepts.
func decodeValid(b []byte) (jsonrpc.Message, error) {
	if b[0] != '{' || tooDeep(b) {
		return jsonrpc.DecodeMessage(b)
	}
	var env envelope
	if !env.read(b) {
		return jsonrpc.DecodeMessage(b)
	}
	id, ok := plainID(env.id)
	if !ok {
		return jsonrpc.DecodeMessage(b)
	}
	if env.method != nil {
		method, ok := projection.PlainString(env.method)
		if !ok {
			return jsonrpc.DecodeMessage(b)
		}
		return &jsonrpc.Request{ID: id, Method: method, Params: env.params}, nil
	}
	if !id.IsValid() {
		return jsonrpc.DecodeMessage(b) // the SDK's "invalid request"
	}
	return &jsonrpc.Response{ID: id, Result: env.result}, nil
}

// tooDeep reports whether the valid JSON b nests deeper than the SDK
// accepts. Valid JSON deeper than maxDepth needs more than maxDepth opening
// brackets, which bytes.Count finds fast, so the walk runs only then.
func tooDeep(b []byte) bool {
	return len(b) > 2*maxDepth &&
		bytes.Count(b, []byte{'{'})+bytes.Count(b, []byte{'['}) > maxDepth &&
		projection.Depth(b) > maxDepth
}

// envelope holds the raw members of a message that the scanner reads.
// Absent members stay nil, which is what the SDK's decoding gives; a member
// present as null keeps the bytes "null", as the SDK's json.RawMessage
// decoding does. A repeated member keeps its last value, as with the SDK.
type envelope struct {
	version, id, method []byte
	params, result      json.RawMessage
}

// read picks the members of obj; it reports false when the message has
// something only the SDK's decoder handles (an error object, an escaped key
// that might spell a member's name) or a version other than "2.0" (the SDK
// words the error).
func (e *envelope) read(obj []byte) bool {
	for key, val := range projection.Members(obj) {
		switch string(key) {
		case `"jsonrpc"`:
			e.version = val
		case `"id"`:
			e.id = val
		case `"method"`:
			e.method = val
		case `"params"`:
			e.params = val
		case `"result"`:
			e.result = val
		case `"error"`:
			return false
		default:
			if bytes.IndexByte(key, '\\') >= 0 {
				return false
			}
		}
	}
	return string(e.version) == `"2.0"`
}

// plainID returns the request id the raw value v makes, as jsonrpc.MakeID
// makes it from the SDK's decoding: absent or null is no id, a number is
// truncated to an integer. It reports false for what it leaves to the SDK:
// a string it cannot take verbatim, a number out of float64 range, any
// other type.
func plainID(v []byte) (jsonrpc.ID, bool) {
	var id jsonrpc.ID
	switch {
	case v == nil || string(v) == "null":
		return id, true
	case v[0] == '"':
		s, ok := projection.PlainString(v)
		if !ok {
			return id, false
		}
		id, _ = jsonrpc.MakeID(s)
		return id, true
	case v[0] == '-' || v[0] >= '0' && v[0] <= '9':
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return id, false
		}
		id, _ = jsonrpc.MakeID(f) // a float64 always makes an id
		return id, true
	default:
		return id, false
	}
}
