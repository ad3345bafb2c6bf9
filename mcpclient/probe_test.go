package mcpclient

import (
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcppeer"
)

// A stdio server that ignores server/discover (no answer at all) is spoken
// to with initialize after discoverProbeBound, not failed after the whole
// startupTimeoutMs.
func TestSilentDiscoverFallsBack(t *testing.T) {
	raw := mcppeer.NewRawServer(mcppeer.RawScript{Silent: []string{"server/discover"}, Pages: onePage(mcppeer.RawTool("t", ""))})
	cfg := stdioConfig("quiet")
	cfg.StartupTimeout = 10 * time.Second
	begin := time.Now()
	h, err := start(t, cfg, Options{NewTransport: rawPipe(t, raw)})
	took := time.Since(begin)
	t.Logf("ready after %v: %v", took, err)
	if err != nil {
		t.Fatalf("start: %v\n%s", err, h.log.Text())
	}
	if took > discoverProbeBound+3*time.Second {
		t.Errorf("took %v", took)
	}
	if got := h.names(); !slices.Equal(got, []string{"mcp__quiet__t"}) {
		t.Errorf("tools: %v", got)
	}
	if st := h.srv.Status(); st.ProtocolVersion != "2025-11-25" {
		t.Errorf("protocol %q", st.ProtocolVersion)
	}
	if !h.log.HasRecord(slog.LevelWarn, "server/discover got no answer; falling back to initialize — set protocolVersion: 2025-11-25 to skip the probe") {
		t.Errorf("no warning:\n%s", h.log.Text())
	}
}
