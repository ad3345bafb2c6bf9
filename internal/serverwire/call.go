package serverwire

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/mcpbridge/mcpbridge/internal/projection"
)

// CallParams are the params of a tools/call request as the SDK's server
// decodes them (mcp.CallToolParamsRaw), for the shapes ReadCallParams
// takes.
type CallParams struct {
	Name      string
	Arguments json.RawMessage // nil when absent
	Meta      map[string]any  // nil when absent
}

// ReadCallParams reads the params of a tools/call request, valid JSON,
// without the SDK's decoder, and reports false for what it leaves to the
// SDK's server: params that are not an object, a member other than name,
// arguments and _meta (or one spelled with escapes or another case, which
// the SDK's decoder also matches), a repeated member, a name that is not a
// plain string, arguments that are not an object, a _meta that is not an
// object or names a key of the protocol's own ("io.modelcontextprotocol/",
// which selects the 2026-07-28 protocol for the request). Parity check P2:
// what it reads equals what the SDK's handler gets.
func ReadCallParams(params json.RawMessage) (CallParams, bool) {
	return readCallParams(params, readMeta)
}

// readCallParams is ReadCallParams with meta reading the _meta object.
func readCallParams(params json.RawMessage, meta func(json.RawMessage, *map[string]any) bool) (CallParams, bool) {
	var p CallParams
	if len(params) == 0 || params[0] != '{' {
		return p, false
	}
	var seen [3]bool
	for key, val := range projection.Members(params) {
		var ok bool
		switch string(key) {
		case `"name"`:
			var plain bool
			p.Name, plain = projection.PlainString(val)
			ok = plain && !seen[0]
			seen[0] = true
		case `"arguments"`:
			ok = !seen[1] && val[0] == '{'
			seen[1] = true
			p.Arguments = val
		case `"_meta"`:
			ok = !seen[2] && val[0] == '{'
			seen[2] = true
			ok = ok && meta(val, &p.Meta)
		}
		if !ok {
			return p, false
		}
	}
	return p, seen[0]
}

// readMeta decodes a _meta object into m, reporting false for one that
// names a protocol key.
func readMeta(obj json.RawMessage, m *map[string]any) bool {
	for key := range projection.Members(obj) {
		if strings.HasPrefix(projection.DecodeString(key), "io.modelcontextprotocol/") {
			return false
		}
	}
	return json.Unmarshal(obj, m) == nil
}

// CallResultJSON returns the result a tools/call handler's result makes
// on the wire through RawResult on a session TakesCalls accepts: the
// content array as is, isError when true, and structuredContent (absent
// when nil) with the HTML characters escaped, as the SDK's
// marshaling of the typed result leaves it (parity check P1). The
// connection's encoding compacts it as it does the SDK's.
func CallResultJSON(isError bool, content, structured json.RawMessage) json.RawMessage {
	out := make([]byte, 0, len(content)+len(structured)+48)
	out = append(out, `{"content":`...)
	out = append(out, content...)
	if isError {
		out = append(out, `,"isError":true`...)
	}
	if structured != nil {
		out = append(out, `,"structuredContent":`...)
		out = appendEscaped(out, structured)
	}
	return append(out, '}')
}

// appendEscaped appends v to out with the HTML characters escaped, as the
// SDK's marshaling of a typed result leaves a raw value.
func appendEscaped(out []byte, v json.RawMessage) []byte {
	buf := bytes.NewBuffer(out)
	json.HTMLEscape(buf, v)
	return buf.Bytes()
}
