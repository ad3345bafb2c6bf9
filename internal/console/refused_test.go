package console_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/host"
)

// An entry whose config on disk a reload refused says so, since when and
// why, on the servers page and on its own page, next to its state.
func TestRefusedConfigShown(t *testing.T) {
	f := newFixture(t)
	since := time.Date(2026, 12, 7, 18, 40, 0, 0, time.UTC)
	why := `entry "gw": the new config did not start, the previous config keeps running: config.policy[0].subjectz: unknown key`
	f.mu.Lock()
	f.status = []host.Status{{ID: "gw", Name: "gateway", Plugin: "gateway", State: host.StateReady,
		Refused: &host.Refusal{Err: why, Since: since}}}
	f.mu.Unlock()
	cc := signedIn(t, f.URL, aliceToken)
	want := "since 2026-12-07T18:40:00Z the config on disk is refused: " + strings.ReplaceAll(why, `"`, "&#34;")
	for _, page := range []string{"/console", "/console/servers/gateway"} {
		if code, body := cc.get(page); code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("%s: %d, want 200 saying %q:\n%s", page, code, want, body)
		}
	}
}
