package mcpclient

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// regionSchema mirrors the argument region as the header Mcp-Param-Region
// (protocol 2026-07-28, x-mcp-header).
const regionSchema = `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"q":{"type":"string"}},"required":["region"]}`

// paramHeaderServer is a go-sdk server whose tool lookup has an x-mcp-header
// argument, next to a plain tool.
func paramHeaderServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "geo", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "lookup", InputSchema: json.RawMessage(regionSchema)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Region, Q string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: args.Q + " in " + args.Region}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "plain", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "plain"}}}, nil
		})
	return srv
}

// paramHeaders returns the Mcp-Param-Region header of every tools/call the
// server received.
func paramHeaders(hs *mcptest.HTTPServer) []string {
	var out []string
	for _, h := range hs.Headers() {
		if h.Get("Mcp-Method") == "tools/call" {
			out = append(out, h.Get("Mcp-Param-Region"))
		}
	}
	return out
}

// Against a stateless go-sdk server (protocol 2026-07-28), a tool with an
// x-mcp-header argument is called with the Mcp-Param header the server
// checks, before and after a re-sync; its schema reaches the registry as
// sent.
func TestParamHeaders(t *testing.T) {
	srv := paramHeaderServer()
	hs := mcptest.NewHTTPServer(t, srv, mcptest.HTTPOptions{Stateless: true})
	h := mustStart(t, Config{ServerName: "geo", Transport: TransportStreamableHTTP, URL: hs.URL}, Options{})
	if v := h.srv.Status().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %q, want 2026-07-28", v)
	}
	for _, tl := range h.reg.List() {
		if tl.Name == "mcp__geo__lookup" && string(tl.InputSchema) != regionSchema {
			t.Errorf("inputSchema %s, want the bytes sent", tl.InputSchema)
		}
	}
	if got := h.call("mcp__geo__lookup", `{"region":"eu-west","q":"rain"}`).Text(); got != "rain in eu-west" {
		t.Fatalf("call: %q", got)
	}
	if got := h.call("mcp__geo__plain", `{}`).Text(); got != "plain" {
		t.Errorf("plain call: %q", got)
	}
	// A re-sync (list_changed) fetches the list again: calls keep their
	// headers.
	mcppeer.AddRuntimeTool(srv, "extra")
	waitFor(t, "the re-sync", func() bool { return slices.Contains(h.names(), "mcp__geo__extra") })
	if got := h.call("mcp__geo__lookup", `{"region":"us-east","q":"sun"}`).Text(); got != "sun in us-east" {
		t.Errorf("call after the re-sync: %q", got)
	}
	if got := paramHeaders(hs); !slices.Equal(got, []string{"eu-west", "", "us-east"}) {
		t.Errorf("Mcp-Param-Region of the calls: %q", got)
	}
}

// A tool with invalid x-mcp-header annotations is ignored, with a log line
// that says why; the others are registered.
func TestInvalidParamHeaderToolIgnored(t *testing.T) {
	bad := json.RawMessage(`{"name":"bad","inputSchema":{"type":"object","properties":{"scope":{"type":"object","x-mcp-header":"Scope"}}}}`)
	good := json.RawMessage(`{"name":"good","inputSchema":` + regionSchema + `}`)
	hs := mcptest.NewRawHTTPServer(t, mcppeer.RawScript{Pages: []mcppeer.RawPage{
		{Tools: []json.RawMessage{good, bad}},
		{Tools: []json.RawMessage{mcppeer.RawTool("plain", "")}},
	}})
	h := mustStart(t, Config{ServerName: "raw", Transport: TransportStreamableHTTP, URL: hs.URL}, Options{})
	if got := strings.Join(h.names(), ","); got != "mcp__raw__good,mcp__raw__plain" {
		t.Errorf("registered %s", got)
	}
	if !h.log.HasRecord(slog.LevelWarn, "tool ignored: invalid x-mcp-header annotation in its inputSchema", "server", "raw", "tool", "bad",
		"reason", mcptest.Contains("x-mcp-header can only be applied to primitive types")) {
		t.Errorf("no log record for the ignored tool:\n%s", h.log.Text())
	}
	for _, rec := range h.log.Records() {
		if strings.Contains(rec.Message, "excluding tool") {
			t.Errorf("the SDK's own record was logged too: %s", rec)
		}
	}
}
