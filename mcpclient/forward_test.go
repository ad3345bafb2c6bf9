package mcpclient

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/tool"
)

// answerSchema is the outputSchema of the forwarded tools that have one.
const answerSchema = `{"type":"object","properties":{"answer":{"type":"integer"}}}`

// forwardHarness is a raw server whose results (in an order, and with
// members, that no model view keeps) a
// consumer may forward as they came: "ok" and "schema" declare
// answerSchema, which "schema"'s result breaks.
func forwardHarness(t *testing.T) *harness {
	t.Helper()
	results := map[string]string{
		"ok":     `{"structuredContent":{"answer":1},"content":[{"type":"text","text":"t"}],"_meta":{"z":1,"a":"\u00e9"}}`,
		"null":   `null`,
		"array":  `[1]`,
		"fail":   `{"content":[{"type":"text","text":"went wrong"}],"isError":true}`,
		"schema": `{"content":[],"structuredContent":{"answer":"one"}}`,
	}
	script := mcppeer.RawScript{Results: map[string]json.RawMessage{}}
	var tools []json.RawMessage
	for name, r := range results {
		script.Results[name] = json.RawMessage(r)
		def := mcppeer.RawTool(name, "")
		if name == "ok" || name == "schema" {
			def = json.RawMessage(`{"name":"` + name + `","inputSchema":{"type":"object"},"outputSchema":` + answerSchema + `}`)
		}
		tools = append(tools, def)
	}
	script.Pages = onePage(tools...)
	h, err := rawHarness(t, script, stdioConfig("raw"))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// forwarding calls name for a consumer that forwards the result of the
// tool forwards.
func (h *harness) forwarding(name, forwards string) tool.Result {
	h.t.Helper()
	ctx := tool.WithConsumer(context.Background(), tool.Consumer{Forwards: forwards})
	res, err := h.reg.Execute(ctx, name, nil)
	if err != nil {
		h.t.Fatalf("Execute(%s): %v", name, err)
	}
	return res
}

// A consumer that forwards a tool's result gets the result byte for byte
// and no model view; any other consumer, or one forwarding another tool's
// result (a program's calls beneath the call it forwards), gets the view.
func TestForwardedResultIsTheWireAlone(t *testing.T) {
	h := forwardHarness(t)
	const want = `{"structuredContent":{"answer":1},"content":[{"type":"text","text":"t"}],"_meta":{"z":1,"a":"\u00e9"}}`
	res := h.forwarding("mcp__raw__ok", "mcp__raw__ok")
	if res.IsError || string(res.Wire) != want {
		t.Fatalf("forwarded: isError %v %q, wire %s; want %s", res.IsError, res.Text(), res.Wire, want)
	}
	if res.Content != nil || res.Value != nil {
		t.Errorf("forwarded result has a model view: content %v, value %s", res.Content, res.Value)
	}
	for _, res := range []tool.Result{h.call("mcp__raw__ok", `{}`), h.forwarding("mcp__raw__ok", "run_code")} {
		if res.Text() != "t" || string(res.Value) != `{"content":[{"type":"text","text":"t"}],"structuredContent":{"answer":1}}` || string(res.Wire) != want {
			t.Errorf("not forwarded: text %q, value %s, wire %s", res.Text(), res.Value, res.Wire)
		}
	}
}

// A forwarded result is checked as any: what is not a tools/call result
// (null, which the gateway would serve as an empty result, or an array),
// an isError result and a structuredContent against the outputSchema
// fail exactly as they fail for a consumer that reads the model view.
func TestForwardedResultIsChecked(t *testing.T) {
	h := forwardHarness(t)
	tests := []struct{ tool, text, wire string }{
		{"null", `Error: server "raw" returned an invalid tools/call result: projecting tools/call result: result is a JSON null, want an object`, ""},
		{"array", `Error: server "raw" returned an invalid tools/call result: projecting tools/call result: result is a JSON array, want an object`, ""},
		{"fail", `Error: went wrong`, `{"content":[{"type":"text","text":"went wrong"}],"isError":true}`},
		{"schema", `Error: tool "mcp__raw__schema" returned invalid output: structuredContent.answer: got string, want integer`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			name := "mcp__raw__" + tc.tool
			res := h.forwarding(name, name)
			if !res.IsError || res.Text() != tc.text || string(res.Wire) != tc.wire {
				t.Errorf("forwarded: isError %v %q, wire %s; want %q, wire %s", res.IsError, res.Text(), res.Wire, tc.text, tc.wire)
			}
			if plain := h.call(name, `{}`); plain.Text() != res.Text() || !reflect.DeepEqual(plain.Error, res.Error) || string(plain.Wire) != string(res.Wire) {
				t.Errorf("forwarded %q %+v, not forwarded %q %+v", res.Text(), res.Error, plain.Text(), plain.Error)
			}
		})
	}
}
