package gateway

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// A 2026-07-28 tools/call whose Mcp-Param-* header says another region
// than its body (what a balancer or WAF in front would have routed or
// filtered on) is refused before any path serves it: 400 with the header
// mismatch error, the tool never run, on the stateful endpoint and the
// stateless one, whether or not the client offers anything. A go-sdk
// client, which mirrors the headers as it should, is served.
func TestParamHeadersCheckedBeforeTheCall(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(map[bool]string{false: "stateful endpoint", true: "stateless"}[stateless], func(t *testing.T) {
			var ran atomic.Int64
			reg := tool.NewRegistry()
			geo := goTool("geo", func(_ context.Context, args json.RawMessage) (tool.Output, error) {
				ran.Add(1)
				return tool.Output{Content: []tool.Content{tool.Text(string(args))}}, nil
			})
			geo.InputSchema = json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`)
			if _, err := reg.Register(geo); err != nil {
				t.Fatal(err)
			}
			opts := Options{Stateless: stateless}
			base := serveHTTP(t, newGateway(t, reg, opts), opts)
			for _, caps := range []string{`{}`, `{"elicitation":{}}`} {
				resp, body := postParamCall(t, base, caps, `{"region":"us"}`, "eu")
				if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `"code":-32020`) || !strings.Contains(body, "Mcp-Param-Region") {
					t.Errorf("capabilities %s, header eu, body us: %d %s; want 400 and the header mismatch", caps, resp.StatusCode, body)
				}
				if resp, body := postParamCall(t, base, caps, `{"region":"eu"}`, "eu"); resp.StatusCode != http.StatusOK || !strings.Contains(body, `region`) {
					t.Errorf("capabilities %s, header and body eu: %d %s; want it served", caps, resp.StatusCode, body)
				}
			}
			if n := ran.Load(); n != 2 {
				t.Errorf("the tool ran %d times; want 2 (the mirrored calls only)", n)
			}

			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "sdk", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if _, err := cs.ListTools(ctx, nil); err != nil { // the SDK mirrors only the headers of tools it listed
				t.Fatal(err)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "geo", Arguments: map[string]any{"region": "eu"}})
			if err != nil || res.IsError {
				t.Fatalf("a go-sdk client's call: %+v, %v", res, err)
			}
		})
	}
}

// postParamCall POSTs a 2026-07-28 tools/call of geo with args, from a
// client offering caps, with the header Mcp-Param-Region: region.
func postParamCall(t *testing.T, base, caps, args, region string) (*http.Response, string) {
	t.Helper()
	frame := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"geo","arguments":` + args +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}}}`
	req, err := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(frame))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "geo", "Mcp-Param-Region": region} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}
