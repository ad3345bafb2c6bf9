package mcpclient

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
)

// An HTTP response over the frame limit fails its call with an error that
// names the limit, not the SDK's bare "rejected by transport".
func TestHTTPResponseOverFrameLimitNamesLimit(t *testing.T) {
	huge := `{"content":[{"type":"text","text":"` + strings.Repeat("x", 2<<20) + `"}]}`
	raw := mcppeer.NewRawServer(mcppeer.RawScript{
		Pages:   onePage(mcppeer.RawTool("huge", "")),
		Results: map[string]json.RawMessage{"huge": json.RawMessage(huge)},
	})
	hs := httptest.NewServer(raw)
	t.Cleanup(hs.Close)
	h := mustStart(t, Config{ServerName: "web", Transport: TransportStreamableHTTP, URL: hs.URL}, Options{MaxResultBytes: 64 << 10})
	got := h.call("mcp__web__huge", `{}`).Text()
	t.Logf("over the limit: %.300s", got)
	if !strings.Contains(got, "frame limit of 1114112 bytes") {
		t.Errorf("the error does not name the frame limit: %.300q", got)
	}
}
