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

// A tool whose _meta alone changes (an app moved to another ui://
// resource) is listed anew: the client is told and sees the new _meta.
func TestGatewayMetaChangeRelisted(t *testing.T) {
	reg := tool.NewRegistry()
	withMeta := func(uri string) tool.Tool {
		tl := goTool("app", textBody("ok"))
		tl.Meta = json.RawMessage(`{"ui":{"resourceUri":"` + uri + `"}}`)
		return tl
	}
	h, err := reg.Register(withMeta("ui://app/v1.html"))
	if err != nil {
		t.Fatal(err)
	}
	g := newGateway(t, reg, Options{})
	c := connectInMemory(t, g)
	uri := func() any {
		res, err := c.session.ListTools(context.Background(), nil)
		if err != nil || len(res.Tools) != 1 {
			t.Fatalf("list: %v %+v", err, res)
		}
		ui, _ := res.Tools[0].Meta["ui"].(map[string]any)
		return ui["resourceUri"]
	}
	if got := uri(); got != "ui://app/v1.html" {
		t.Fatalf("resourceUri %v", got)
	}
	if _, err := reg.Replace(h, withMeta("ui://app/v2.html")); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, c.changed, "list_changed for the new _meta")
	waitFor(t, "the new _meta listed", func() bool { return uri() == "ui://app/v2.html" })
}
