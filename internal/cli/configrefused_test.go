package cli

import (
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/internal/mcptest"
)

// A reload of a config file that does not parse at all (broken YAML, not
// one entry refused) is shown in /healthz: the config on disk is
// refused, since when, and why at which file and line, while the previous
// config serves and /readyz stays 200, until a reload reads the file
// again. Before, only the log said so, and /healthz read as if the edit
// had been applied.
func TestServeReloadUnparsableFileIsShown(t *testing.T) {
	t.Parallel()
	fx := fixtureEntries(t, "fx")
	s := startReloadedServe(t, fx)
	s.mustServe(t, "before the reload")

	s.reload(t, fx+"- id: [broken\n", "config not reloaded")
	mcptest.Eventually(t, 10*time.Second, func() bool {
		return strings.Contains(s.probe(t, "/healthz").body, "config on disk is refused")
	}, "/healthz to say the config on disk is refused")
	b, body := s.backend(t, "config file")
	since := regexp.MustCompile(`^since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ the config on disk is refused: ` + regexp.QuoteMeta(s.cfg) + `:\d+`)
	if !b.OK || b.State != "refused" || !since.MatchString(b.Error) {
		t.Errorf("with the file broken, /healthz %s; want a %q entry, refused and ok, saying since when the config on disk is refused, at which line of %s", body, "config file", s.cfg)
	}
	if p := s.probe(t, "/readyz"); p.status != http.StatusOK {
		t.Errorf("with the file broken, /readyz %d %s; want 200: the previous config serves", p.status, p.body)
	}
	s.mustServe(t, "with the file broken")
	first := b.Error

	time.Sleep(time.Second) // a new Since would differ
	s.reload(t, fx+"- id: [broken\n", "config not reloaded")
	if b, body := s.backend(t, "config file"); b.Error != first {
		t.Errorf("refused again for the same reason: /healthz %s; want %q still", body, first)
	}

	// The file as it was: nothing to apply, and nothing refused.
	if err := os.WriteFile(s.cfg, []byte(fx), 0o644); err != nil {
		t.Fatal(err)
	}
	mcptest.Eventually(t, 30*time.Second, func() bool {
		p := s.probe(t, "/healthz")
		return p.status == http.StatusOK && !strings.Contains(p.body, "refused")
	}, "/healthz to say nothing is refused once the file is fixed")
}
