package cli

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
)

// Cline's settings name a server's transport transportType (its older
// field, still read): "sse" is the legacy SSE transport whatever the URL's
// path, and the tools of a real SSE server are listed. The field was left
// out, and the URL, not ending in /sse, taken for Streamable HTTP, which
// the server does not speak.
func TestClineTransportType(t *testing.T) {
	fixture := mcppeer.Fixture(mcppeer.FixtureOptions{})
	srv := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return fixture }, nil))
	t.Cleanup(srv.Close)
	cfg := writeFile(t, "cline_mcp_settings.json", `{"mcpServers": {"old": {"url": "`+srv.URL+`/events", "transportType": "sse", "disabled": false, "autoApprove": []}}}`)
	r := mcpbridge(t, "", "tools", "--config", cfg)
	if r.code != ExitOK || !strings.Contains(r.stdout, "mcp__old__") || strings.Contains(r.stderr, "transportType") {
		t.Errorf("tools: %+v", r)
	}
}
