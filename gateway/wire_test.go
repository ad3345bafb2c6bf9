package gateway

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/tool"
)

const (
	oddInput  = `{"type":"object","properties":{"n":{"type":"integer","maximum":12345678901234567890}},"x-vendor":{"b":1,"a":2}}`
	oddOutput = `{"type":"object","properties":{"n":{"type":"integer"}},"x-order":{"z":1,"a":2}}`
)

// oddBackend starts a raw backend "r" whose results the SDK cannot all
// decode, behind a gateway, and connects a raw stdio client.
func oddBackend(t *testing.T) *rawClient {
	t.Helper()
	reg := tool.NewRegistry()
	startRawBackend(t, reg, "r", mcppeer.RawScript{
		Pages: []mcppeer.RawPage{{Tools: []json.RawMessage{
			json.RawMessage(`{"name":"odd","description":"Odd results.","inputSchema":` + oddInput + `,"outputSchema":` + oddOutput + `}`),
			mcppeer.RawTool("oddfail", ""),
			mcppeer.RawTool("legacy", ""),
			mcppeer.RawTool("empty", ""),
		}}},
		Results: map[string]json.RawMessage{
			"odd":     json.RawMessage(`{"content":[{"type":"text","text":"a","annotations":{"priority":1},"x-extra":{"k":1}},{"type":"video","uri":"x"},42,{"type":"text","text":5},{"type":"text","text":"b"}],"structuredContent":{"n":12345678901234567890}}`),
			"oddfail": json.RawMessage(`{"isError":true,"content":[{"type":"text","text":"bad"},{"type":"video"}],"structuredContent":{"code":7}}`),
			"legacy":  json.RawMessage(`{"toolResult":{"x":1}}`),
			"empty":   json.RawMessage(`{}`),
		},
	})
	return connectRaw(t, newGateway(t, reg, Options{}))
}

// Schemas and results reach the client byte for byte: key order, number
// digits and unknown fields survive; blocks the SDK cannot decode become
// their projected text, and the call still succeeds.
func TestWireBytes(t *testing.T) {
	c := oddBackend(t)

	list := c.request("tools/list", `{}`)
	var listed struct {
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(list.Result, &listed); err != nil {
		t.Fatalf("tools/list result %s: %v", list.Result, err)
	}
	found := false
	for _, tl := range listed.Tools {
		if tl.Name == "mcp__r__odd" {
			found = true
			if string(tl.InputSchema) != oddInput || string(tl.OutputSchema) != oddOutput {
				t.Errorf("schemas changed on the way:\n in  %s\nwant %s\n out %s\nwant %s", tl.InputSchema, oddInput, tl.OutputSchema, oddOutput)
			}
		}
	}
	if !found {
		t.Fatalf("mcp__r__odd not listed: %s", list.Result)
	}

	tests := []struct {
		tool                string
		isError             bool
		content, structured string
	}{
		{
			tool:       "mcp__r__odd",
			content:    `[{"type":"text","text":"a","annotations":{"priority":1},"x-extra":{"k":1}},{"type":"text","text":"[unsupported MCP content type: video]"},{"type":"text","text":"[unsupported MCP content block: expected an object]"},{"type":"text","text":"5"},{"type":"text","text":"b"}]`,
			structured: `{"n":12345678901234567890}`,
		},
		{
			tool:       "mcp__r__oddfail",
			isError:    true,
			content:    `[{"type":"text","text":"bad"},{"type":"text","text":"[unsupported MCP content type: video]"}]`,
			structured: `{"code":7}`,
		},
		{tool: "mcp__r__legacy", content: `[{"type":"text","text":"{\"x\":1}"}]`},
		{tool: "mcp__r__empty", content: `[{"type":"text","text":"(no output)"}]`},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			res := c.request("tools/call", `{"name":"`+tt.tool+`","arguments":{}}`)
			if res.Error != nil {
				t.Fatalf("JSON-RPC error %+v", res.Error)
			}
			var got struct {
				IsError    bool            `json:"isError"`
				Content    json.RawMessage `json:"content"`
				Structured json.RawMessage `json:"structuredContent"`
			}
			if err := json.Unmarshal(res.Result, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.content, string(got.Content)); diff != "" || got.IsError != tt.isError {
				t.Errorf("isError %v (want %v), content (-want +got):\n%s", got.IsError, tt.isError, diff)
			}
			if string(got.Structured) != tt.structured {
				t.Errorf("structuredContent %s, want %s", got.Structured, tt.structured)
			}
		})
	}
}

func TestWireErrors(t *testing.T) {
	c := oddBackend(t)
	res := c.request("tools/call", `{"name":"mcp__r__nope","arguments":{}}`)
	if res.Error == nil || res.Error.Code != -32602 {
		t.Errorf("unknown tool: %+v, want JSON-RPC error -32602", res.Error)
	}
	// Garbage is answered, and the session keeps serving.
	garbage := []struct {
		line, id string
		code     int
	}{
		{`this is not JSON`, "null", -32700},
		{`{"jsonrpc":"2.0","id":7,"method":5}`, "7", -32600},
		{`{"jsonrpc":"1.0","id":"v1","method":"ping"}`, `"v1"`, -32600},
		{`{"hello":"world"}`, "null", -32600},
	}
	for _, g := range garbage {
		c.send(g.line)
		res := c.response(g.id)
		if res.Error == nil || res.Error.Code != g.code {
			t.Errorf("%s: answered %+v, want error %d", g.line, res.Error, g.code)
		}
	}
	res = c.request("tools/call", `{"name":"mcp__r__legacy","arguments":{}}`)
	if res.Error != nil || res.Result == nil {
		t.Errorf("call after garbage: %+v / %s", res.Error, res.Result)
	}
}
