package mcptest

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
)

// Checks of the peers in internal/mcppeer, shared by its tests and the
// tests of the HTTP and third-party servers here.

// FixtureCall is one tool call and the result it must give.
type FixtureCall struct {
	Name      string // subtest name, when a table needs one
	Tool      string
	Args      map[string]any
	Want      any // the content blocks as plain JSON
	WantError bool
	WantSC    any // structuredContent as plain JSON, nil if absent
}

// TextBlock is a text content block as plain JSON.
func TextBlock(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

// Blocks is a content array as plain JSON.
func Blocks(b ...any) []any { return b }

// CheckCall makes c's call on cs and fails t unless it gives c's result.
func CheckCall(t testing.TB, cs *mcp.ClientSession, c FixtureCall) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.Tool, Arguments: c.Args})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", c.Tool, err)
	}
	if res.IsError != c.WantError {
		t.Errorf("%s: isError = %v, want %v", c.Tool, res.IsError, c.WantError)
	}
	if diff := cmp.Diff(c.Want, AsJSON(t, res.Content)); diff != "" {
		t.Errorf("%s: content (-want +got):\n%s", c.Tool, diff)
	}
	var sc any
	if res.StructuredContent != nil {
		sc = AsJSON(t, res.StructuredContent)
	}
	if diff := cmp.Diff(c.WantSC, sc); diff != "" {
		t.Errorf("%s: structuredContent (-want +got):\n%s", c.Tool, diff)
	}
}

// ToolNames lists the tools of cs, sorted.
func ToolNames(t testing.TB, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tl, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("listing tools: %v", err)
		}
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

// AsJSON round-trips v through JSON, to compare it as plain JSON.
func AsJSON(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %T: %v", v, err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
	return out
}

// SampleRawScript is a script with two pages of tools and results of the
// shapes the SDK cannot produce.
func SampleRawScript() mcppeer.RawScript {
	return mcppeer.RawScript{
		Pages: []mcppeer.RawPage{
			{Tools: []json.RawMessage{mcppeer.RawTool("a", "tool a"), mcppeer.RawTool("b", "tool b")}},
			{Tools: []json.RawMessage{mcppeer.RawTool("c", "tool c")}},
		},
		Results: map[string]json.RawMessage{
			"a":      json.RawMessage(`{"content":[{"type":"text","text":"hello"}]}`),
			"video":  json.RawMessage(`{"content":[{"type":"video","url":"x"},42,null]}`),
			"legacy": json.RawMessage(`{"toolResult":{"ok":true}}`),
		},
		Errors: map[string]mcppeer.RawError{"boom": {Code: -32000, Message: "boom", Data: json.RawMessage(`{"why":"scripted"}`)}},
	}
}

// headerTransport adds fixed headers to every request, like the bridge's
// configured HTTP headers.
type headerTransport struct{ header http.Header }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.header {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}

// ConnectHTTP connects a client with opts to the Streamable HTTP server at
// url, sending header on every request; the session closes with t.
func ConnectHTTP(t testing.TB, url string, opts *mcp.ClientOptions, header http.Header) *mcp.ClientSession {
	t.Helper()
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: headerTransport{header}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcptest-test", Version: "0"}, opts).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatalf("connecting over HTTP to %s: %v", url, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}
