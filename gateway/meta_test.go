package gateway

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
	"github.com/mcpbridge/mcpbridge/tool"
)

// A backend tool's _meta (where MCP Apps name the tool's ui:// resource)
// reaches the gateway's client as sent; a _meta that is no object is not
// passed on.
func TestGatewayServesToolMeta(t *testing.T) {
	const meta = `{"ui":{"resourceUri":"ui://app/view.html","visibility":["model","app"]},"ui/resourceUri":"ui://app/view.html","n":7}`
	script := mcppeer.RawScript{Pages: []mcppeer.RawPage{{Tools: []json.RawMessage{
		json.RawMessage(`{"name":"app","inputSchema":{"type":"object"},"_meta":` + meta + `}`),
		json.RawMessage(`{"name":"odd","inputSchema":{"type":"object"},"_meta":["not","an","object"]}`),
	}}}}
	reg := tool.NewRegistry()
	startRawBackend(t, reg, "apps", script)
	g := newGateway(t, reg, Options{})
	c := connectInMemory(t, g)
	waitFor(t, "the backend's tools served", func() bool { return len(c.names(t)) == 2 })
	res, err := c.session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tl := range res.Tools {
		b, err := json.Marshal(tl.Meta)
		if err != nil {
			t.Fatal(err)
		}
		got[tl.Name] = string(b)
	}
	want := map[string]string{"mcp__apps__app": compactJSON(t, meta), "mcp__apps__odd": "null"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("_meta served (-want +got):\n%s", diff)
	}
}

// compactJSON is s with keys sorted, as encoding/json writes a map.
func compactJSON(t *testing.T, s string) string {
	t.Helper()
	var v map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
