package gatewayrun

import (
	"errors"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mcpbridge/mcpbridge/gateway"
	"github.com/mcpbridge/mcpbridge/host"
	"github.com/mcpbridge/mcpbridge/internal/gatewayauth"
)

// serve over HTTP that started without a token to require does not
// authenticate its requests; a reload that adds auth would check the
// calls' tokens while sessions, streams and limits went on as one
// anonymous client's. It is refused, saying to restart, and the gateway
// keeps the config it had; on stdio, or with auth from the start, it
// applies.
func TestReloadAddingAuthNeedsARestart(t *testing.T) {
	withAuth := decodeGateway(t, "auth: {tokens: {alice: ALICE}}\npolicy: [{subjects: [alice], allow: [\"*\"]}]\n")
	noAuth := decodeGateway(t, "policy: [{subjects: [anonymous], allow: [\"*\"]}]\n")
	for _, c := range []struct {
		name  string
		stdio bool
		plan  *host.Plan
		want  error
	}{
		{"http, started without auth", false, &host.Plan{}, gatewayauth.ErrAuthNeedsRestart},
		{"stdio, started without auth", true, &host.Plan{}, nil},
		{"http, started with auth", false, &host.Plan{Entries: []host.PlanEntry{{Entry: host.Entry{ID: "gw", Name: "gateway"}, Spec: host.Spec{Config: withAuth}}}}, nil},
	} {
		k := gatewayauth.NewKeeper(gatewayauth.Options{})
		opts := withKeeper(gateway.Options{}, k, c.plan, c.stdio)
		if err := k.Apply(t.Context(), noAuth, nil); err != nil {
			t.Fatalf("%s: a config without auth: %v", c.name, err)
		}
		if err := k.Apply(t.Context(), withAuth, nil); !errors.Is(err, c.want) {
			t.Errorf("%s: a reload adding auth: %v, want %v", c.name, err, c.want)
		}
		if c.want != nil && k.Current().Auth.Tokens != nil {
			t.Errorf("%s: the refused config was applied", c.name)
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
