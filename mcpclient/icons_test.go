package mcpclient

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
)

func TestIconVerdict(t *testing.T) {
	for src, kept := range map[string]bool{
		"https://example.test/i.png":         true,
		"HTTPS://example.test/i.png":         true,
		"data:image/svg+xml;base64,PHN2Zz4=": true,
		"data:image/png,raw":                 true,
		"http://example.test/i.png":          false,
		"https:///no-host.png":               false,
		"javascript:alert(1)":                false,
		"file:///etc/passwd":                 false,
		"data:text/html,<script>":            false,
		"data:image/png":                     false,
		"/relative.png":                      false,
		"":                                   false,
		"data:image/png," + strings.Repeat("A", maxIconBytes): false,
	} {
		if got := iconVerdict(src) == ""; got != kept {
			t.Errorf("iconVerdict(%.40q) = %q, want kept %v", src, iconVerdict(src), kept)
		}
	}
}

// Dropped icons are logged with the tool, their count and the reason;
// kept ones are carried in the registry.
func TestIconsCarriedAndDropped(t *testing.T) {
	script := mcppeer.RawScript{Pages: onePage(json.RawMessage(`{"name":"pic","inputSchema":{"type":"object"},"icons":[{"src":"javascript:alert(1)"},{"src":"https://example.test/a.png","sizes":["any"]}]}`))}
	h, err := rawHarness(t, script, stdioConfig("raw"))
	if err != nil {
		t.Fatal(err)
	}
	pic, ok := h.reg.Get("mcp__raw__pic")
	if !ok || len(pic.Icons) != 1 || pic.Icons[0].Src != "https://example.test/a.png" || pic.Icons[0].Sizes[0] != "any" {
		t.Fatalf("icons %+v (%v)", pic.Icons, ok)
	}
	if !h.log.HasRecord(slog.LevelWarn, "icons dropped", "tool", "pic", "dropped", "1", "src", "javascript:alert(1)", "reason", "neither an https: URL nor a data: image") {
		t.Errorf("log:\n%s", h.log.Text())
	}
}
