package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// appsView is what testdata/node_apps.mjs prints.
type appsView struct {
	Tools []struct {
		Name string          `json:"name"`
		Meta json.RawMessage `json:"_meta"`
	} `json:"tools"`
	Resources []json.RawMessage `json:"resources"`
	Reads     map[string]struct {
		Contents []struct {
			URI      string          `json:"uri"`
			MIMEType string          `json:"mimeType"`
			Text     string          `json:"text"`
			Meta     json.RawMessage `json:"_meta"`
		} `json:"contents"`
	} `json:"reads"`
}

// runNodeApps runs testdata/node_apps.mjs against the stdio server cmd.
func runNodeApps(t *testing.T, cmd ...string) appsView {
	t.Helper()
	out, _ := runNodeScript(t, "node_apps.mjs", cmd...)
	var v appsView
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("node client printed %d bytes, not its view: %v\n%.2000s", len(out), err, out)
	}
	return v
}

// An MCP Apps server behind `serve`: the TypeScript SDK client sees the
// app's tool with its _meta.ui, the ui:// resource listed, and reads the
// resource exactly as it reads it from the server directly.
func TestServeMCPApp(t *testing.T) {
	bin := mcptest.ThirdPartyBin(t, "mcp-server-basic-vanillajs")
	direct := runNodeApps(t, bin, "--stdio")
	if len(direct.Tools) != 1 || len(direct.Reads) != 1 {
		t.Fatalf("the app server itself offers %+v", direct)
	}
	cfg := writeConfig(t, fmt.Sprintf(`- id: app
  name: mcp-client
  config:
    serverName: app
    transport: stdio
    command: %s
    args: [--stdio]
`, bin))
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	served := runNodeApps(t, exe, "serve", "--stdio", "--config", cfg)

	if len(served.Tools) != 1 || served.Tools[0].Name != "mcp__app__"+direct.Tools[0].Name {
		t.Fatalf("served tools %+v, want the app's %q", served.Tools, direct.Tools[0].Name)
	}
	if diff := cmp.Diff(decodeJSON(t, direct.Tools[0].Meta), decodeJSON(t, served.Tools[0].Meta)); diff != "" {
		t.Errorf("tool _meta (-direct +served):\n%s", diff)
	}
	if diff := cmp.Diff(direct.Resources, served.Resources, cmp.Transformer("json", func(r json.RawMessage) any { return decodeJSON(t, r) })); diff != "" {
		t.Errorf("resources (-direct +served):\n%s", diff)
	}
	for uri, want := range direct.Reads {
		got, ok := served.Reads[uri]
		if !ok || len(got.Contents) != len(want.Contents) {
			t.Fatalf("read %s through serve: %+v", uri, got)
		}
		for i, w := range want.Contents {
			g := got.Contents[i]
			if g.Text != w.Text || len(w.Text) == 0 {
				t.Errorf("read %s: served text (%d bytes) differs from the server's (%d bytes)", uri, len(g.Text), len(w.Text))
			}
			if g.URI != w.URI || g.MIMEType != w.MIMEType {
				t.Errorf("read %s: served %s %s, server sends %s %s", uri, g.URI, g.MIMEType, w.URI, w.MIMEType)
			}
			if diff := cmp.Diff(decodeJSON(t, w.Meta), decodeJSON(t, g.Meta)); diff != "" {
				t.Errorf("read %s _meta (-direct +served):\n%s", uri, diff)
			}
		}
	}
}

func decodeJSON(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return v
}
