package sdkwire

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpbridge/mcpbridge/internal/projection"
)

// What a server refuses before the SDK reads a frame, on every transport:
// a batch longer than MaxBatch, and a request id the SDK would answer under
// another id. jsonrpc.MakeID turns every JSON number into an int64 by way
// of float64, so 1.5 is answered as 1 and 2^64+1 as -2^63: a client would
// match the answer to the wrong request, or to none.

// maxExactID bounds the integer ids carried exactly: float64 holds every
// integer up to 2^53.
const maxExactID = 1 << 53

// Refusal is a frame refused whole: the error to answer, and the raw id to
// answer it under (empty when there is none to name).
type Refusal struct {
	ID  json.RawMessage
	Err *jsonrpc.Error
}

// ScreenFrame checks one frame (a JSON-RPC message or a batch) that a server
// is about to hand the SDK; nil means the SDK may read it. Invalid JSON and
// malformed messages are left to the SDK, which words their errors.
func ScreenFrame(frame []byte) *Refusal {
	ref, _ := Screen(frame)
	return ref
}

// Screen is ScreenFrame, reporting besides whether frame is valid JSON
// (json.Valid): a frame it lets through valid needs no second check, and
// decodes with DecodeValid.
func Screen(frame []byte) (ref *Refusal, valid bool) {
	if !json.Valid(frame) {
		return nil, false
	}
	return screenValid(frame), true
}

// screenValid is ScreenFrame for the valid JSON frame.
func screenValid(frame []byte) *Refusal {
	frame = frame[skipSpace(frame, 0):]
	if len(frame) == 0 || frame[0] != '[' {
		return screenMessage(frame)
	}
	n := 0
	for msg := range projection.Elements(frame) {
		if n++; n > MaxBatch {
			return &Refusal{Err: batchTooLong(countElements(frame))}
		}
		if r := screenMessage(msg); r != nil {
			return r
		}
	}
	return nil
}

// countElements counts the elements of the valid JSON array arr.
func countElements(arr []byte) int {
	n := 0
	for range projection.Elements(arr) {
		n++
	}
	return n
}

// batchTooLong is the error answering a batch of n messages, over MaxBatch.
func batchTooLong(n int) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("Invalid Request: a batch of %d messages is over the limit of %d", n, MaxBatch)}
}

// screenMessage refuses the valid JSON msg when its id cannot be carried
// exactly.
func screenMessage(msg []byte) *Refusal {
	id, bad := inexactID(msg)
	if !bad {
		return nil
	}
	shown := string(id)
	if len(shown) > 40 {
		shown = shown[:40] + "…"
	}
	return &Refusal{ID: id, Err: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("Invalid Request: id %s cannot be answered exactly; an id is a string or an integer from -2^53 to 2^53", shown)}}
}

// inexactID returns the id of the valid JSON msg and reports whether it is
// a number other than an integer within ±2^53. Every member the SDK's
// decoder could take for the id counts (it matches names without regard to
// case or escapes).
func inexactID(msg []byte) (json.RawMessage, bool) {
	if len(msg) == 0 || msg[0] != '{' {
		return nil, false
	}
	for key, val := range projection.Members(msg) {
		if !strings.EqualFold(projection.DecodeString(key), "id") || !isNumber(val) {
			continue
		}
		if !exactInteger(string(val)) {
			return json.RawMessage(val), true
		}
	}
	return nil, false
}

func isNumber(v []byte) bool { return len(v) > 0 && (v[0] == '-' || v[0] >= '0' && v[0] <= '9') }

// exactInteger reports whether the JSON number lit is an integer literal
// within ±2^53 (no fraction, no exponent: 1.0 would be answered as 1).
func exactInteger(lit string) bool {
	n, err := strconv.ParseInt(lit, 10, 64)
	return err == nil && n >= -maxExactID && n <= maxExactID
}
