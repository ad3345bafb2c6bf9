package gatewayrun

import (
	"errors"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/gatewayauth"
)

// serve over HTTP that started without a token to require does not
// authenticate its requests; a reload that adds auth would check the
// calls' tokens while sessions, streams and limits went on as one
// anonymous client's. One that started with auth authenticates them; a
// reload that removes it would let no token pass. Either is refused,
// saying to restart, and the gateway keeps the config it had; on stdio
// both apply.
func TestReloadChangingAuthNeedsARestart(t *testing.T) {
	withAuth := decodeGateway(t, "auth: {tokens: {alice: ALICE}}\npolicy: [{subjects: [alice], allow: [\"*\"]}]\n")
	noAuth := decodeGateway(t, "policy: [{subjects: [anonymous], allow: [\"*\"]}]\n")
	authPlan := &host.Plan{Entries: []host.PlanEntry{{Entry: host.Entry{ID: "gw", Name: "gateway"}, Spec: host.Spec{Config: withAuth}}}}
	for _, c := range []struct {
		name        string
		stdio       bool
		plan        *host.Plan
		first, then gatewayauth.Config
		want        error
	}{
		{"http, started without auth", false, &host.Plan{}, noAuth, withAuth, gatewayauth.ErrAuthNeedsRestart},
		{"stdio, started without auth", true, &host.Plan{}, noAuth, withAuth, nil},
		{"http, started with auth", false, authPlan, withAuth, noAuth, gatewayauth.ErrAuthRemovalNeedsRestart},
		{"stdio, started with auth", true, authPlan, withAuth, noAuth, nil},
	} {
		k := gatewayauth.NewKeeper(gatewayauth.Options{})
		opts := withKeeper(gateway.Options{}, k, c.plan, c.stdio)
		if err := k.Apply(t.Context(), c.first, nil); err != nil {
			t.Fatalf("%s: the config it started with: %v", c.name, err)
		}
		err := k.Apply(t.Context(), c.then, nil)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: a reload changing auth: %v, want %v", c.name, err, c.want)
		}
		if kept := k.Current().Auth.Tokens != nil; c.want != nil && kept != (c.first.Auth.Tokens != nil) {
			t.Errorf("%s: the refused config was applied", c.name)
		}
		if c.want != nil && !strings.Contains(err.Error(), "(the gateway keeps the config it had)") {
			t.Errorf("%s: the refusal %q does not say the gateway keeps its config", c.name, err)
		}
		if got := opts.Authenticate != nil; got != (c.plan.Entries != nil) {
			t.Errorf("%s: requests authenticated %v", c.name, got)
		}
		k.Clear(k.Current())
	}
}

func decodeGateway(t *testing.T, src string) gatewayauth.Config {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		t.Fatal(err)
	}
	cfg, err := gatewayauth.Decode(n.Content[0], func(k string) (string, bool) { return "tok", true })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
