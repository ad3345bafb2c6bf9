//lint:file-ignore SA1019 MCP 2026-07-28 deprecates roots and sampling (SEP-2577) but keeps them working for at least a year; the take decodes a client's offer of them as the SDK does.

package serverwire

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ReadCallParams leaves to the SDK every shape it does not read as the
// SDK does.
func TestReadCallParamsRefuses(t *testing.T) {
	for _, params := range []string{
		``,
		`null`,
		`[]`,
		`{}`,
		`{"arguments":{}}`,
		`{"name":5}`,
		`{"name":"r\u0065c"}`,
		`{"name":"rec","name":"rec"}`,
		`{"name":"rec","Name":"other"}`,
		`{"nam\u0065":"rec"}`,
		`{"name":"rec","arguments":null}`,
		`{"name":"rec","arguments":[1]}`,
		`{"name":"rec","arguments":{},"arguments":{}}`,
		`{"name":"rec","_meta":null}`,
		`{"name":"rec","_meta":{},"_meta":{}}`,
		`{"name":"rec","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
		`{"name":"rec","_meta":{"io.modelcontextprotocol\/logLevel":"debug"}}`,
		`{"name":"rec","inputResponses":{}}`,
		`{"name":"rec","requestState":"s"}`,
	} {
		if p, ok := ReadCallParams(json.RawMessage(params)); ok {
			t.Errorf("ReadCallParams(%s) = %+v, want it left to the SDK", params, p)
		}
	}
}

func TestCallResultJSON(t *testing.T) {
	for _, c := range []struct {
		isError             bool
		content, structured string
		want                string
	}{
		{content: `[]`, want: `{"content":[]}`},
		{isError: true, content: `[{"type":"text","text":"<"}]`, want: `{"content":[{"type":"text","text":"<"}],"isError":true}`},
		{content: `[]`, structured: `{"a":"<&>"}`, want: `{"content":[],"structuredContent":{"a":"\u003c\u0026\u003e"}}`},
	} {
		var structured json.RawMessage
		if c.structured != "" {
			structured = json.RawMessage(c.structured)
		}
		if got := CallResultJSON(c.isError, json.RawMessage(c.content), structured); string(got) != c.want {
			t.Errorf("CallResultJSON(%v, %s, %s) = %s, want %s", c.isError, c.content, c.structured, got, c.want)
		}
	}
}

func TestReadPerRequestCall(t *testing.T) {
	const version = `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`
	const base = version + `,"io.modelcontextprotocol/clientCapabilities":{}`
	none := &mcp.ClientCapabilities{}
	offering := func(caps string) string { return version + `,"io.modelcontextprotocol/clientCapabilities":` + caps }
	roots := &mcp.RootCapabilities{ListChanged: true}
	tests := []struct {
		name, meta string
		want       ClientMeta
		ok         bool
	}{
		{"the least", base, ClientMeta{Version: "2026-07-28", Capabilities: none}, true},
		{"all it reads", base + `,"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1","title":"T"},"io.modelcontextprotocol/logLevel":"debug","progressToken":3`, ClientMeta{Version: "2026-07-28", Client: "c", LogLevel: "debug", Capabilities: none}, true},
		{"no version", `"io.modelcontextprotocol/clientCapabilities":{}`, ClientMeta{}, false},
		{"a version twice", base + `,"io.modelcontextprotocol/protocolVersion":"2026-07-28"`, ClientMeta{}, false},
		{"no capabilities", version, ClientMeta{}, false},
		{"capabilities with space", offering(`{ }`), ClientMeta{Version: "2026-07-28", Capabilities: none}, true},
		{"roots, as the SDK's session has them", offering(`{"roots":{"listChanged":true}}`), ClientMeta{Version: "2026-07-28", Capabilities: &mcp.ClientCapabilities{Roots: *roots, RootsV2: roots}}, true},
		{"sampling and elicitation", offering(`{"sampling":{"tools":{}},"elicitation":{"form":{}}}`), ClientMeta{Version: "2026-07-28", Capabilities: &mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{Tools: &mcp.SamplingToolsCapabilities{}}, Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}}}, true},
		{"the tasks extension", offering(`{"extensions":{"io.modelcontextprotocol/tasks":{}}}`), ClientMeta{}, false},
		{"experimental", offering(`{"experimental":{}}`), ClientMeta{}, false},
		{"a capability twice", offering(`{"roots":{},"roots":{}}`), ClientMeta{}, false},
		{"a capability not an object", offering(`{"sampling":true}`), ClientMeta{}, false},
		{"capabilities not an object", offering(`[]`), ClientMeta{}, false},
		{"a capability of the wrong shape", offering(`{"roots":{"listChanged":"yes"}}`), ClientMeta{}, false},
		{"a member in another case", offering(`{"sampling":{"Tools":{}}}`), ClientMeta{}, false},
		{"a member twice", offering(`{"sampling":{"tools":{},"tools":null}}`), ClientMeta{}, false},
		{"an unknown member", offering(`{"roots":{"listChanged":true,"more":1}}`), ClientMeta{}, false},
		{"an escaped member", offering(`{"roots":{"list\u0043hanged":true}}`), ClientMeta{}, false},
		{"a clientInfo name not a string", base + `,"io.modelcontextprotocol/clientInfo":{"name":1}`, ClientMeta{}, false},
		{"a clientInfo with icons", base + `,"io.modelcontextprotocol/clientInfo":{"name":"c","icons":[]}`, ClientMeta{}, false},
		{"a clientInfo with an escaped name", base + `,"io.modelcontextprotocol/clientInfo":{"name":"c\u0041"}`, ClientMeta{}, false},
		{"a clientInfo of null", base + `,"io.modelcontextprotocol/clientInfo":null`, ClientMeta{}, false},
		{"a log level not a string", base + `,"io.modelcontextprotocol/logLevel":1`, ClientMeta{}, false},
		{"another protocol key", base + `,"io.modelcontextprotocol/subscriptionId":"s"`, ClientMeta{}, false},
	}
	for _, tt := range tests {
		p, got, ok := ReadPerRequestCall(json.RawMessage(`{"name":"t","_meta":{` + tt.meta + `}}`))
		if ok != tt.ok || ok && (!reflect.DeepEqual(got, tt.want) || p.Name != "t" || p.Meta[mcp.MetaKeyProtocolVersion] != "2026-07-28") {
			t.Errorf("%s: ReadPerRequestCall = %+v, %+v, %v; want %+v, %v", tt.name, p, got, ok, tt.want, tt.ok)
		}
	}
	if _, _, ok := ReadPerRequestCall(json.RawMessage(`{"name":"t"}`)); ok {
		t.Error("params without _meta were read as a 2026-07-28 call")
	}
}
