package gateway

import (
	"context"
	"testing"

	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/gatewayauth"
	"github.com/mcpbridge/mcpbridge/tool"
)

// keeperHost is a host running one gateway entry applied to a real Keeper.
func keeperHost(t *testing.T) (*host.Host, *gatewayauth.Keeper) {
	t.Helper()
	keeper := gatewayauth.NewKeeper(gatewayauth.Options{})
	cat := host.NewCatalog(NewKind(keeper))
	h, err := host.New(host.Options{Catalog: cat, Registry: tool.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	plan, err := cat.Parse("gw.yaml", []byte("- {id: gw, name: gateway, config: {policy: [{allow: [\"*\"]}]}}\n"), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Apply(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	if keeper.Current() == nil {
		t.Fatal("the gateway entry is not in force after its first apply")
	}
	return h, keeper
}

// A console restart whose request ends (its tab closed, its timeout
// passed) never leaves the gateway without its config: the new instance
// put it in force as it started, so it is never abandoned and closed
// (closing it would clear the config the old one no longer holds).
func TestRestartInterruptedKeepsTheConfigInForce(t *testing.T) {
	h, keeper := keeperHost(t)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 64 {
		_ = h.Restart(cancelled, "gw")
		if keeper.Current() == nil {
			t.Fatalf("restart %d with its request ended: the gateway entry's config is no longer in force (every call refused); status %+v", i+1, h.Status())
		}
		if st := h.Status()[0]; st.State != host.StateReady {
			t.Fatalf("restart %d: status %+v, want ready", i+1, st)
		}
	}
}

// An instance whose config is no longer in force says so: status failed
// (so health is not OK and a reload starts it again), not ready while
// every call is refused.
func TestStatusSaysWhenTheConfigIsCleared(t *testing.T) {
	h, keeper := keeperHost(t)
	keeper.Clear(keeper.Current())
	st := h.Status()[0]
	if st.State != host.StateFailed || st.Err == "" {
		t.Fatalf("status after the config was cleared: %+v, want failed with why", st)
	}
	// A reload of the same file starts the failed entry again.
	if err := h.Restart(context.Background(), "gw"); err != nil {
		t.Fatal(err)
	}
	if keeper.Current() == nil || h.Status()[0].State != host.StateReady {
		t.Errorf("after a restart: config in force %v, status %+v", keeper.Current() != nil, h.Status()[0])
	}
}
