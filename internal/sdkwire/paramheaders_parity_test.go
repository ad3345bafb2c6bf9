package sdkwire

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/serverwire"
)

// headerSchema annotates a string, an integer, a boolean and a nested
// string with x-mcp-header.
const headerSchema = `{"type":"object","properties":{` +
	`"region":{"type":"string","x-mcp-header":"Region"},` +
	`"n":{"type":"integer","x-mcp-header":"N"},` +
	`"flag":{"type":"boolean","x-mcp-header":"Flag"},` +
	`"where":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}}}}`

// Parity check P9: the SDK's Streamable HTTP handler refuses a 2026-07-28
// tools/call whose Mcp-Param-* headers do not say what its annotated
// arguments say, with 400 and the header mismatch error, exactly when
// serverwire.ParamHeadersProblem finds a problem, and with its words.
func TestParityParamHeaders(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "contract", Version: "0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "geo", InputSchema: json.RawMessage(headerSchema)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	url := httpServer(t, srv, true)
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, c := range []struct {
		name, args string
		headers    map[string]string
		refused    bool
	}{
		{"all mirrored", `{"region":"eu","n":7,"flag":true,"where":{"zone":"b"}}`, map[string]string{"Region": "eu", "N": "7", "Flag": "true", "Zone": "b"}, false},
		{"none given, none sent", `{}`, nil, false},
		{"a null argument", `{"region":null}`, nil, false},
		{"a header for an absent argument", `{}`, map[string]string{"Region": "eu"}, true},
		{"a missing header", `{"region":"eu"}`, nil, true},
		{"another value", `{"region":"eu"}`, map[string]string{"Region": "us"}, true},
		{"base64", `{"region":"é"}`, map[string]string{"Region": "=?base64?w6k=?="}, false},
		{"broken base64", `{"region":"é"}`, map[string]string{"Region": "=?base64?***?="}, true},
		{"an integer written 7.0", `{"n":7}`, map[string]string{"N": "7.0"}, false},
		{"an integer, another", `{"n":7}`, map[string]string{"N": "8"}, true},
		{"a fraction", `{"n":7.5}`, map[string]string{"N": "7.5"}, true},
		{"an unsafe integer", `{"n":9007199254740993}`, map[string]string{"N": "9007199254740993"}, true},
		{"a boolean spelled otherwise", `{"flag":true}`, map[string]string{"Flag": "True"}, true},
		{"an object where a string is annotated", `{"region":{"a":1}}`, map[string]string{"Region": "x"}, true},
		{"nested, mismatched", `{"where":{"zone":"b"}}`, map[string]string{"Zone": "c"}, true},
		{"nested under a non-object", `{"where":"b"}`, map[string]string{"Zone": "b"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			params := `{"name":"geo","arguments":` + c.args + `,` + meta + `}`
			req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+params+`}`))
			if err != nil {
				t.Fatal(err)
			}
			h := req.Header
			h.Set("Content-Type", "application/json")
			h.Set("Accept", "application/json, text/event-stream")
			h.Set("Mcp-Protocol-Version", serverwire.PerRequestVersion)
			h.Set("Mcp-Method", "tools/call")
			h.Set("Mcp-Name", "geo")
			for k, v := range c.headers {
				h.Set("Mcp-Param-"+k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			problem := serverwire.ParamHeadersProblem(h, json.RawMessage(params), json.RawMessage(headerSchema))
			refused := resp.StatusCode == http.StatusBadRequest
			if refused != c.refused {
				t.Errorf("the SDK answered %d %s; want refused %v", resp.StatusCode, body, c.refused)
			}
			if refused != (problem != "") || refused && !strings.Contains(string(body), jsonString(problem)) {
				t.Errorf("the SDK answered %d %s; ParamHeadersProblem says %q", resp.StatusCode, body, problem)
			}
		})
	}
}

// jsonString is s as a JSON string's contents.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
