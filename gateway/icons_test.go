package gateway

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/tool"
)

// A backend's tool icons reach the gateway's client as the backend sent
// them, but for those a client must never fetch or render (an http: URL,
// javascript:, a file, a data: URI that is no image), which the bridge
// drops on the way in.
func TestGatewayServesSafeIcons(t *testing.T) {
	const data = "data:image/png;base64,iVBORw0KGgo="
	script := mcppeer.RawScript{Pages: []mcppeer.RawPage{{Tools: []json.RawMessage{json.RawMessage(`{"name":"pic","inputSchema":{"type":"object"},"icons":[` +
		`{"src":"https://example.test/a.png","mimeType":"image/png","sizes":["48x48"],"theme":"dark"},` +
		`{"src":"http://example.test/b.png"},{"src":"javascript:alert(1)"},{"src":"file:///etc/passwd"},` +
		`{"src":"data:text/html,<b>x</b>"},{"src":"/relative.png"},` +
		`{"src":"` + data + `"}]}`)}}}}
	reg := tool.NewRegistry()
	startRawBackend(t, reg, "icons", script)
	g := newGateway(t, reg, Options{})
	c := connectInMemory(t, g)
	waitFor(t, "the backend's tool served", func() bool { return len(c.names(t)) == 1 })
	res, err := c.session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []mcp.Icon{
		{Source: "https://example.test/a.png", MIMEType: "image/png", Sizes: []string{"48x48"}, Theme: "dark"},
		{Source: data},
	}
	if diff := cmp.Diff(want, res.Tools[0].Icons); diff != "" {
		t.Errorf("icons served (-want +got):\n%s", diff)
	}
}
