//lint:file-ignore SA1019 MCP 2026-07-28 deprecates logging and roots (SEP-2577) but keeps them working for at least a year; a request's log level decides what the SDK sends, and its roots fill the deprecated field as the SDK's session does.

package serverwire

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/projection"
)

// PerRequestVersion is the protocol version whose requests carry their
// client's facts in _meta (SEP-2575), which the Streamable HTTP handler
// serves only when stateless.
const PerRequestVersion = "2026-07-28"

// ClientMeta is what a 2026-07-28 request's _meta says of its client, as
// the SDK's server session reads it (parity check P7).
type ClientMeta struct {
	Version  string // the protocol version (MetaKeyProtocolVersion)
	Client   string // the clientInfo's name, "" without clientInfo
	LogLevel string // MetaKeyLogLevel, "" without: no log message is sent
	// Capabilities is what the client offers (MetaKeyClientCapabilities),
	// as the SDK's session has it (roots in Roots and RootsV2).
	Capabilities *mcp.ClientCapabilities
}

// ReadPerRequestCall reads the params of a 2026-07-28 tools/call as
// ReadCallParams does, its _meta carrying the client's facts, and reports
// false for what it leaves to the SDK: besides what ReadCallParams
// leaves, a _meta without a plain protocol version, clientCapabilities
// offering more than roots, sampling and elicitation (a client of the
// tasks extension may have its calls run as tasks), a clientInfo other
// than an object of plain name, version and title strings, a log level
// that is not a plain string, any other key of the protocol's own, or a
// protocol key given twice.
func ReadPerRequestCall(params json.RawMessage) (CallParams, ClientMeta, bool) {
	var c ClientMeta
	p, ok := readCallParams(params, func(obj json.RawMessage, m *map[string]any) bool {
		return readClientMeta(obj, &c) && json.Unmarshal(obj, m) == nil
	})
	return p, c, ok && c.Version != ""
}

// readClientMeta reads the protocol's keys of a _meta object into c.
func readClientMeta(obj json.RawMessage, c *ClientMeta) bool {
	seen := map[string]bool{}
	for key, val := range projection.Members(obj) {
		k := projection.DecodeString(key)
		ok := true
		switch k {
		case mcp.MetaKeyProtocolVersion:
			c.Version, ok = projection.PlainString(val)
		case mcp.MetaKeyClientCapabilities:
			c.Capabilities, ok = readCapabilities(val)
		case mcp.MetaKeyClientInfo:
			c.Client, ok = readClientInfo(val)
		case mcp.MetaKeyLogLevel:
			c.LogLevel, ok = projection.PlainString(val)
		default:
			ok = !isProtocolKey(k)
		}
		if !ok || isProtocolKey(k) && seen[k] {
			return false
		}
		seen[k] = true
	}
	return seen[mcp.MetaKeyClientCapabilities]
}

// capabilityMembers are the members of a client capability the take
// reads, by capability, as written (quoted, unescaped): the SDK's decoder
// matches member names exactly, encoding/json also in other cases, so
// any other spelling is left to the SDK.
var capabilityMembers = map[string][]string{
	`"roots"`:       {`"listChanged"`},
	`"sampling"`:    {`"context"`, `"tools"`},
	`"elicitation"`: {`"form"`, `"url"`},
}

// readCapabilities decodes a 2026-07-28 clientCapabilities object as the
// SDK's session does (roots, in that revision's place, also in the
// deprecated Roots), when it offers nothing but roots, sampling and
// elicitation, each an object given once, of the members
// capabilityMembers names, each given once.
func readCapabilities(obj json.RawMessage) (*mcp.ClientCapabilities, bool) {
	if !membersOnce(obj, func(k string) bool { return capabilityMembers[k] != nil }) {
		return nil, false
	}
	for key, val := range projection.Members(obj) {
		if !membersOnce(val, func(k string) bool { return slices.Contains(capabilityMembers[string(key)], k) }) {
			return nil, false
		}
	}
	caps, err := DecodeCapabilities(obj)
	return caps, err == nil
}

// DecodeCapabilities decodes a 2026-07-28 clientCapabilities object as the
// SDK's session does: roots, in that revision's place, in RootsV2 and in
// the deprecated Roots.
func DecodeCapabilities(obj json.RawMessage) (*mcp.ClientCapabilities, error) {
	var v2 struct {
		mcp.ClientCapabilities
		Roots *mcp.RootCapabilities `json:"roots,omitempty"`
	}
	if err := json.Unmarshal(obj, &v2); err != nil {
		return nil, err
	}
	caps := v2.ClientCapabilities
	caps.RootsV2 = v2.Roots
	if v2.Roots != nil {
		caps.Roots = *v2.Roots
	}
	return &caps, nil
}

// membersOnce reports whether obj is an object each of whose member names
// (as written) known accepts and no other member of it repeats.
func membersOnce(obj json.RawMessage, known func(string) bool) bool {
	if obj[0] != '{' {
		return false
	}
	seen := map[string]bool{}
	for key := range projection.Members(obj) {
		k := string(key)
		if seen[k] || !known(k) {
			return false
		}
		seen[k] = true
	}
	return true
}

// isProtocolKey reports whether a _meta key is one of the protocol's own.
func isProtocolKey(k string) bool {
	return strings.HasPrefix(k, "io.modelcontextprotocol/")
}

// readClientInfo returns the name of a clientInfo object of plain name,
// version and title strings, each at most once.
func readClientInfo(obj json.RawMessage) (string, bool) {
	if obj[0] != '{' {
		return "", false
	}
	var name string
	seen := map[string]bool{}
	for key, val := range projection.Members(obj) {
		k := string(key)
		v, plain := projection.PlainString(val)
		if !plain || seen[k] || k != `"name"` && k != `"version"` && k != `"title"` {
			return "", false
		}
		seen[k] = true
		if k == `"name"` {
			name = v
		}
	}
	return name, true
}

// PerRequestAskError is the error the SDK's server session returns for a
// request of method it is asked to send its client while serving a
// request of protocol version, 2026-07-28 or later (parity check P7): it
// sends none.
func PerRequestAskError(method, version string) error {
	return fmt.Errorf("%q cannot be sent while serving a request on protocol version %s: return an InputRequests map instead (multi round-trip requests, SEP-2322)", method, version)
}

// CallResultJSONPerRequest is CallResultJSON as the SDK's server stamps
// it for a 2026-07-28 request (parity check P7): _meta naming the server
// (serverInfo, ServerInfoJSON) and "resultType":"complete", the members
// in the SDK's order.
func CallResultJSONPerRequest(isError bool, content, structured, serverInfo json.RawMessage) json.RawMessage {
	out := make([]byte, 0, len(content)+len(structured)+len(serverInfo)+96)
	out = append(out, `{"_meta":{"`+mcp.MetaKeyServerInfo+`":`...)
	out = append(out, serverInfo...)
	out = append(out, `},"content":`...)
	out = append(out, content...)
	if isError {
		out = append(out, `,"isError":true`...)
	}
	out = append(out, `,"resultType":"complete"`...)
	if structured != nil {
		out = append(out, `,"structuredContent":`...)
		out = appendEscaped(out, structured)
	}
	return append(out, '}')
}

// ServerInfoJSON is the serverInfo the SDK's server names in the _meta of
// a 2026-07-28 result: its Implementation, marshaled.
func ServerInfoJSON(impl *mcp.Implementation) json.RawMessage {
	raw, err := json.Marshal(impl)
	if err != nil {
		panic("sdkwire: marshaling an Implementation: " + err.Error()) // unreachable: a struct of strings
	}
	return raw
}

// ErrorStatus is the HTTP status the Streamable HTTP handler answers a
// 2026-07-28 request's error with (parity check P7): 404 for an unknown
// method, 400 for invalid params, an unsupported protocol version or
// missing client capabilities, written as one application/json body;
// 0 for any other error, which goes on the stream as a result would.
func ErrorStatus(err error) int {
	wire, ok := errors.AsType[*jsonrpc.Error](err)
	if !ok {
		return 0
	}
	switch wire.Code {
	case jsonrpc.CodeMethodNotFound:
		return 404
	case jsonrpc.CodeInvalidParams, mcp.CodeUnsupportedProtocolVersion, mcp.CodeMissingRequiredClientCapabilities:
		return 400
	}
	return 0
}

// PeekMetaVersion returns the protocol version a POST's whole body names
// in its request's _meta (MetaKeyProtocolVersion, as a 2026-07-28 request
// carries it), "" for none, a batch or a body that is not one request.
func PeekMetaVersion(body []byte) string {
	var req struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if len(body) == 0 || body[0] != '{' || json.Unmarshal(body, &req) != nil {
		return ""
	}
	var version string
	if json.Unmarshal(req.Params.Meta[mcp.MetaKeyProtocolVersion], &version) != nil {
		return ""
	}
	return version
}
