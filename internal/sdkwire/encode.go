package sdkwire

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// JSON-RPC message encoding without reflection (assumption 12 of the
// package doc). jsonrpc.EncodeMessage runs a json.Encoder over the SDK's
// wire struct: {"jsonrpc":"2.0"}, then id, method, params, result and
// error, each left out when empty, with params and result compacted
// and nothing HTML-escaped. The hot shapes (a request or response with a
// numeric id or none, a method of plain ASCII, a result) are written
// here in that order; anything else (a string id, an error, a method
// that needs escaping, params that do not compact) goes to
// jsonrpc.EncodeMessage, so the bytes are the SDK's: TestEncodeMessage
// and FuzzEncodeMessage check that they are.

// EncodeMessage encodes msg exactly as jsonrpc.EncodeMessage does.
func EncodeMessage(msg jsonrpc.Message) ([]byte, error) {
	if data, ok := encodePlain(msg); ok {
		return data, nil
	}
	return jsonrpc.EncodeMessage(msg)
}

// encodePlain encodes the shapes it knows, reporting false for the rest.
func encodePlain(msg jsonrpc.Message) ([]byte, bool) {
	var (
		id             jsonrpc.ID
		method         string
		params, result json.RawMessage
	)
	switch m := msg.(type) {
	case *jsonrpc.Request:
		id, method, params = m.ID, m.Method, m.Params
		if !plainMethod(method) {
			return nil, false
		}
	case *jsonrpc.Response:
		if m.Error != nil || len(m.Result) == 0 {
			return nil, false
		}
		id, result = m.ID, m.Result
	default:
		return nil, false
	}
	out := make([]byte, 0, len(`{"jsonrpc":"2.0","id":,"method":"","params":}`)+20+len(method)+len(params)+len(result))
	out = append(out, `{"jsonrpc":"2.0"`...)
	switch raw := id.Raw().(type) {
	case nil:
	case int64:
		out = strconv.AppendInt(append(out, `,"id":`...), raw, 10)
	default:
		return nil, false
	}
	if method != "" {
		out = append(append(append(out, `,"method":"`...), method...), '"')
	}
	for _, member := range []struct {
		key string
		raw json.RawMessage
	}{{`,"params":`, params}, {`,"result":`, result}} {
		if len(member.raw) == 0 {
			continue
		}
		buf := bytes.NewBuffer(append(out, member.key...))
		if json.Compact(buf, member.raw) != nil {
			return nil, false
		}
		out = buf.Bytes()
	}
	return append(out, '}'), true
}

// plainMethod reports whether method is written in JSON as it is:
// printable ASCII without a quote or backslash (the SDK's encoder escapes
// no HTML characters).
func plainMethod(method string) bool {
	for i := 0; i < len(method); i++ {
		if c := method[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
