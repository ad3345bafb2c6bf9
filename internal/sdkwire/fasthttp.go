package sdkwire

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The wire work of answering a tools/call POST beneath the SDK's
// Streamable HTTP handler (assumption 33 of the package doc): the SDK's
// server decodes each POST three times over with a fresh 32 KiB-buffer
// decoder (the body, the request's _meta, the params), which is most of
// what an HTTP call costs the gateway. A server that answers the call
// itself reads the body with PeekCall and writes the response as the
// SDK's handler does: the same headers, the same SSE events (a priming
// event first where the SDK writes one, event ids in the SDK's format)
// or the same application/json body. docs/http-fast-path.md says what
// else such a path must take over from the SDK before it may serve.

// PeekCall returns the tools/call request a POST's whole body holds, and
// false for anything else (a batch, a notification or a response, another
// method, a body the package's decoder leaves to the SDK's), which stays
// with the SDK. It reads without a JSON decoder (assumption 12) and keeps
// nothing of body but the params it returns.
func PeekCall(body []byte) (*jsonrpc.Request, bool) {
	if len(body) == 0 || body[0] != '{' {
		return nil, false // a batch, or leading space the SDK may treat otherwise
	}
	msg, err := decodeMessage(body)
	if err != nil {
		return nil, false
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() || req.Method != "tools/call" {
		return nil, false
	}
	return req, true
}

// PeekCancelled returns the request a POST's whole body cancels, when it
// is one notifications/cancelled naming a plain id: a server that answers
// calls beneath the SDK cancels its own, and hands the body on to the SDK
// still (the id may be one of the SDK's calls too).
func PeekCancelled(body []byte) (jsonrpc.ID, bool) {
	if len(body) == 0 || body[0] != '{' {
		return jsonrpc.ID{}, false
	}
	msg, err := decodeMessage(body)
	if err != nil {
		return jsonrpc.ID{}, false
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.IsCall() || req.Method != "notifications/cancelled" {
		return jsonrpc.ID{}, false
	}
	return cancelledID(req.Params)
}

// PeekRequestIDs returns the ids of the requests (not notifications or
// responses) a POST's whole body holds, one message or a batch: those the
// SDK's handler checks against the session's requests in flight before it
// serves them (assumption 39). Nil for a body it cannot read, which the
// SDK refuses anyway.
func PeekRequestIDs(body []byte) []jsonrpc.ID {
	if len(body) == 0 {
		return nil
	}
	msgs := [][]byte{body}
	if body[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(body, &batch) != nil {
			return nil
		}
		msgs = msgs[:0]
		for _, m := range batch {
			msgs = append(msgs, m)
		}
	}
	var ids []jsonrpc.ID
	for _, m := range msgs {
		msg, err := decodeMessage(m)
		if err != nil {
			return nil
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			ids = append(ids, req.ID)
		}
	}
	return ids
}

// LogPasses reports whether the SDK's server session sends a log message
// of level to a client whose session's level is session (assumption 35):
// none before the client sets a level (session ""), then those at the
// session's level or above, in syslog order, a level the SDK does not know
// ranking as debug.
func LogPasses(level, session string) bool {
	return session != "" && logRank[level] >= logRank[session]
}

// logRank orders the levels; a missing one is 0, as debug.
var logRank = map[string]int{"debug": 0, "info": 1, "notice": 2, "warning": 3, "error": 4, "critical": 5, "alert": 6, "emergency": 7}

// KeepAliveBody is a POST body that resets the Streamable HTTP handler's
// idle timer of the session it names and changes nothing else
// (assumption 34): a notifications/cancelled naming a request the session
// never had. The handler resets a session's timer only when it serves a
// POST of the session, so a server that answers the session's calls
// beneath it sends it this now and then.
const KeepAliveBody = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"mcpbridge-keepalive","reason":"keep-alive"}}`

// ResponseJSON returns the JSON-RPC response to the request id, with
// result, or err's error when err is not nil (a *jsonrpc.Error keeps its
// code; any other error is an internal error), encoded as the SDK's
// connections encode it.
func ResponseJSON(id jsonrpc.ID, result json.RawMessage, err error) ([]byte, error) {
	return jsonrpc.EncodeMessage(response(id, result, err))
}

// NotificationJSON returns the JSON-RPC notification of method with
// params, encoded as the SDK's session encodes what it sends (params
// marshaled without HTML escaping).
func NotificationJSON(method string, params any) ([]byte, error) {
	raw, err := marshalUnescaped(params)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", method, err)
	}
	return jsonrpc.EncodeMessage(&jsonrpc.Request{Method: method, Params: raw})
}

// RequestJSON returns the JSON-RPC request id of method with params,
// encoded as the SDK's session encodes the requests it sends.
func RequestJSON(id jsonrpc.ID, method string, params any) ([]byte, error) {
	raw, err := marshalUnescaped(params)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", method, err)
	}
	return jsonrpc.EncodeMessage(&jsonrpc.Request{ID: id, Method: method, Params: raw})
}

// PeekResponse returns the response a POST's whole body holds, when it is
// one JSON-RPC response (an answer to a request the server sent), and
// false for anything else.
func PeekResponse(body []byte) (*jsonrpc.Response, bool) {
	if len(body) == 0 || body[0] != '{' {
		return nil, false
	}
	msg, err := decodeMessage(body)
	if err != nil {
		return nil, false
	}
	resp, ok := msg.(*jsonrpc.Response)
	return resp, ok
}

// response is the JSON-RPC response to the request id.
func response(id jsonrpc.ID, result json.RawMessage, err error) *jsonrpc.Response {
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
