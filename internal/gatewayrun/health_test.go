package gatewayrun

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/gatewayauth"
	gatewaykind "github.com/mcpbridge/mcpbridge/internal/kinds/gateway"
)

// The health the probes read is not OK while the gateway entry's config is
// not in force, whatever took it away (cleared under its instance, or the
// entry removed by a reload): every call is refused then.
func TestHealthFailsWithoutTheGatewayConfig(t *testing.T) {
	keeper := gatewayauth.NewKeeper(gatewayauth.Options{})
	cat := host.NewCatalog(gatewaykind.NewKind(keeper))
	parse := func(src string) *host.Plan {
		plan, err := cat.Parse("gw.yaml", []byte(src), func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatal(err)
		}
		return plan
	}
	withGateway := parse("- {id: gw, name: gateway, config: {policy: [{allow: [\"*\"]}]}}\n")
	cfg := Config{Stdio: true, Logger: slog.New(slog.DiscardHandler)}
	r, err := newRun(cfg, keeper, cat, withKeeper(gateway.Options{}, keeper, withGateway, true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.gw.Close(); r.h.Close() })
	if err := requireGateway(keeper, withGateway, true); err != nil {
		t.Fatal(err)
	}
	if h := r.gw.Health(); h.OK {
		t.Errorf("before the gateway entry is applied (every call refused), health is OK: %+v", h)
	}
	if err := r.h.Apply(context.Background(), withGateway); err != nil {
		t.Fatal(err)
	}
	if h := r.gw.Health(); !h.OK {
		t.Fatalf("with the gateway entry in force, health %+v", h)
	}

	keeper.Clear(keeper.Current())
	h := r.gw.Health()
	if h.OK || len(h.Backends) != 1 || h.Backends[0].State != "failed" || !strings.Contains(h.Backends[0].Error, "no longer in force") {
		t.Errorf("with the config cleared under its entry, health %+v; want not OK, the entry failed", h)
	}

	if err := r.h.Restart(context.Background(), "gw"); err != nil {
		t.Fatal(err)
	}
	if err := r.h.Apply(context.Background(), parse("[]\n")); err != nil {
		t.Fatal(err)
	}
	h = r.gw.Health()
	if h.OK || len(h.Backends) != 1 || h.Backends[0].Name != "gateway" || h.Backends[0].State != "failed" || !strings.Contains(h.Backends[0].Error, "no gateway entry is in force, so every call is refused") {
		t.Errorf("with the gateway entry removed, health %+v; want not OK, saying why", h)
	}
	if err := r.h.Apply(context.Background(), parse("- {id: gw, name: gateway, disabled: true, config: {}}\n")); err != nil {
		t.Fatal(err)
	}
	if h := r.gw.Health(); h.OK || len(h.Backends) != 1 || h.Backends[0].Name != "gateway" || !strings.Contains(h.Backends[0].Error, "the gateway entry is disabled, so every call is refused: enable it") {
		t.Errorf("with the gateway entry disabled, health %+v; want not OK, saying why", h)
	}
}
