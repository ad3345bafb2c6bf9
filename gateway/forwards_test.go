package gateway

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpbridge/mcpbridge/tool"
)

// The gateway forwards the result of each call it relays, and says so for
// that tool alone; an inner call's Result is kept for the served tool
// that made it, which reads its content, so its source must build it.
func TestGatewayForwardsRelayedCalls(t *testing.T) {
	reg := tool.NewRegistry()
	var g *Gateway
	forwards := func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		return tool.Output{Content: []tool.Content{tool.Text("forwards " + tool.ForwardsFrom(ctx))}}, nil
	}
	outer := func(ctx context.Context, _ json.RawMessage) (tool.Output, error) {
		res, err := g.CallFor(ctx, "probe", json.RawMessage(`{}`))
		if err != nil {
			return tool.Output{}, err
		}
		return tool.Output{Content: []tool.Content{tool.Text("outer forwards " + tool.ForwardsFrom(ctx) + ", its inner call: " + res.Text())}}, nil
	}
	if _, err := reg.Register(goTool("probe", forwards), goTool("outer", outer)); err != nil {
		t.Fatal(err)
	}
	g = newGateway(t, reg, Options{})
	c := connectInMemory(t, g)
	if got := texts(c.call(t, "probe", `{}`)); len(got) != 1 || got[0] != "forwards probe" {
		t.Errorf("probe answered %q, want [forwards probe]", got)
	}
	if got := texts(c.call(t, "outer", `{}`)); len(got) != 1 || got[0] != "outer forwards outer, its inner call: forwards " {
		t.Errorf("outer answered %q, want [outer forwards outer, its inner call: forwards ]", got)
	}
}
