package serverwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The wire work of serving Streamable HTTP as the SDK's handler does
// (parity check P3), for a transport of a server's own
// (the gateway's, docs/engine.md): the same headers, the same SSE events
// (a priming event first where the SDK writes one, event ids in the
// SDK's format) or the same application/json body, and the messages
// encoded as the SDK encodes them.

// LogPasses reports whether the SDK's server session sends a log message
// of level to a client whose session's level is session (parity check P4):
// none before the client sets a level (session ""), then those at the
// session's level or above, in syslog order, a level the SDK does not know
// ranking as debug.
func LogPasses(level, session string) bool {
	return session != "" && logRank[level] >= logRank[session]
}

// logRank orders the levels; a missing one is 0, as debug.
var logRank = map[string]int{"debug": 0, "info": 1, "notice": 2, "warning": 3, "error": 4, "critical": 5, "alert": 6, "emergency": 7}

// ResponseJSON returns the JSON-RPC response to the request id, with
// result, or err's error when err is not nil (a *jsonrpc.Error keeps its
// code; any other error is an internal error), encoded as the SDK's
// connections encode it.
func ResponseJSON(id jsonrpc.ID, result json.RawMessage, err error) ([]byte, error) {
	return jsonrpc.EncodeMessage(Response(id, result, err))
}

// NotificationJSON returns the JSON-RPC notification of method with
// params, encoded as the SDK's session encodes what it sends (params
// marshaled without HTML escaping).
func NotificationJSON(method string, params any) ([]byte, error) {
	raw, err := MarshalUnescaped(params)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", method, err)
	}
	return jsonrpc.EncodeMessage(&jsonrpc.Request{Method: method, Params: raw})
}

// Response is the JSON-RPC response to the request id, with result, or
// err's error when err is not nil.
func Response(id jsonrpc.ID, result json.RawMessage, err error) *jsonrpc.Response {
	if err == nil {
		return &jsonrpc.Response{ID: id, Result: result}
	}
	wire, ok := errors.AsType[*jsonrpc.Error](err)
	if !ok {
		wire = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	return &jsonrpc.Response{ID: id, Error: wire}
}

// SetResponseHeaders sets the headers the SDK's handler sets on the
// response to a POST that carries a call: an SSE stream, or with
// jsonResponse (StreamableHTTPOptions.JSONResponse) one application/json
// body.
func SetResponseHeaders(h http.Header, jsonResponse bool) {
	h.Set("Cache-Control", "no-cache, no-transform")
	if jsonResponse {
		h.Set("Content-Type", "application/json")
		return
	}
	h.Set("Content-Type", "text/event-stream")
	h.Set("Connection", "keep-alive")
}

// Primes reports whether the SDK's handler opens the SSE response to a
// POST of protocol version with a priming event: with an event store,
// from 2025-11-25 and before 2026-07-28 (which dropped resumable
// streams). An empty version is the SDK's default for a POST without
// Mcp-Protocol-Version, 2025-03-26.
func Primes(version string, eventStore bool) bool {
	return eventStore && version >= "2025-11-25" && version < "2026-07-28"
}

// EventID is the id the SDK gives the idx-th event (from 0) of the stream
// called stream, which a client's Last-Event-ID brings back when it
// resumes the stream.
func EventID(stream string, idx int) string {
	return stream + "_" + strconv.Itoa(idx)
}

// AppendEvent appends to dst one SSE event as the SDK writes it: "event:
// <name>", then "id: <id>" when id is not empty, then "data: <data>" and
// a blank line. A priming event is AppendEvent(dst, "prime", id, nil); a
// message, AppendEvent(dst, "message", id, message).
func AppendEvent(dst []byte, name, id string, data []byte) []byte {
	dst = append(dst, "event: "...)
	dst = append(dst, name...)
	dst = append(dst, '\n')
	if id != "" {
		dst = append(dst, "id: "...)
		dst = append(dst, id...)
		dst = append(dst, '\n')
	}
	dst = append(dst, "data: "...)
	dst = append(dst, data...)
	return append(dst, '\n', '\n')
}

// MarshalUnescaped marshals v as json.Marshal does, without HTML escaping,
// so texts keep their bytes.
func MarshalUnescaped(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
