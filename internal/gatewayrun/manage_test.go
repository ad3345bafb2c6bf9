package gatewayrun

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/host"
	webconsole "github.com/mcpbridge/mcpbridge/internal/console"
	"github.com/mcpbridge/mcpbridge/internal/gatewayauth"
	gatewaykind "github.com/mcpbridge/mcpbridge/internal/kinds/gateway"
)

// stillKind's instances start at once and do nothing.
type stillKind struct{}

func (stillKind) Name() string { return "still" }
func (stillKind) Decode(*yaml.Node, func(string) (string, bool)) (host.Spec, error) {
	return host.Spec{Config: struct{}{}, Name: "still"}, nil
}
func (stillKind) Start(context.Context, host.Spec, host.Env) (host.Instance, error) {
	return stillInstance{}, nil
}

type stillInstance struct{}

func (stillInstance) Ready() <-chan struct{} { c := make(chan struct{}); close(c); return c }
func (stillInstance) StartErr() error        { return nil }
func (stillInstance) Close() error           { return nil }
func (stillInstance) Status() host.Status    { return host.Status{State: host.StateReady} }

// The console's reload of one entry reads the config files as a full
// reload does, requirements included: once the files have a gateway
// entry, the gateway serves no call until it is in force, whichever
// entry the console reloads. It used to read them without that step, so
// a backend reloaded from the console was served to every caller,
// unguarded, while the files said a gateway entry guards it.
func TestConsoleReloadOfOneEntryRequiresTheGateway(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcpbridge.yaml")
	write := func(src string) {
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("- {id: b, name: still}\n")
	keeper := gatewayauth.NewKeeper(gatewayauth.Options{})
	cat := host.NewCatalog(gatewaykind.NewKind(keeper), stillKind{})
	read := func(c *host.Catalog) (*host.Plan, error) {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return c.Parse(path, data, func(string) (string, bool) { return "", false })
	}
	cfg := Config{Stdio: true, Logger: slog.New(slog.DiscardHandler), Reload: read, Files: func() []string { return []string{path} }}
	plan, err := read(cat)
	if err != nil {
		t.Fatal(err)
	}
	r, err := newRun(cfg, keeper, cat, withKeeper(gateway.Options{}, keeper, plan, true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.gw.Close(); r.h.Close() })
	if err := r.h.Apply(t.Context(), plan); err != nil {
		t.Fatal(err)
	}
	if _, _, err := keeper.Enter(t.Context(), gateway.Call{Public: "mcp__still__x"}); err != nil {
		t.Fatalf("a call before the files name a gateway entry: %v", err)
	}

	// The files now guard the run; the backend is reloaded from the console.
	write("- {id: gw, name: gateway, config: {policy: [{subjects: [nobody], allow: [\"*\"]}]}}\n- {id: b, name: still}\n")
	if err := r.manage(t.Context(), cat, "b", webconsole.ActionReload); err != nil {
		t.Fatalf("the console's reload of b: %v", err)
	}
	if _, _, err := keeper.Enter(t.Context(), gateway.Call{Public: "mcp__still__x"}); err == nil {
		t.Error("a call after the console's reload: served, unguarded, while the files name a gateway entry not in force")
	}
	if h := r.gw.Health(); h.Ready || h.Refusing == "" {
		t.Errorf("health after the console's reload: %+v, want not ready, refusing every call", h)
	}
}
