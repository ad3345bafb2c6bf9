package gateway

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/tool"
)

// screenOut is a Gate and Screen that hides one tool from everyone.
type screenOut struct{ hidden string }

func (s screenOut) Enter(ctx context.Context, c Call) (context.Context, func(Outcome) error, error) {
	if c.Public == s.hidden {
		return nil, nil, ErrHidden
	}
	return ctx, func(Outcome) error { return nil }, nil
}

func (s screenOut) Screen(context.Context, http.Header, string) func(Offer, string) bool {
	return func(_ Offer, name string) bool { return name != s.hidden }
}

// A tool its source withholds (its pin changed) answers why, so that the
// operator learns what to re-pin, as the CLI's call does; to a caller the
// Screen hides it from, it is a tool that does not exist, as any hidden
// tool.
func TestWithheldToolAnswersWhy(t *testing.T) {
	const why = "changed since pinned: description; accept it with mcpbridge pin s"
	newReg := func(t *testing.T) *tool.Registry {
		reg := tool.NewRegistry()
		if err := reg.NewSource().PublishOffer(tool.Offer{Tools: []tool.Tool{goTool("mcp__s__kept", textBody("ok"))},
			Withheld: map[string]string{"mcp__s__changed": why}}); err != nil {
			t.Fatal(err)
		}
		return reg
	}
	plain := func(name string) string { return `{"name":"` + name + `","arguments":{}}` }
	c := connectRaw(t, newGateway(t, newReg(t), Options{}))
	got := c.request("tools/call", plain("mcp__s__changed"))
	if got.Error == nil || !strings.Contains(got.Error.Message, `tool "mcp__s__changed" is withheld: `+why) {
		t.Errorf("a withheld tool's call: %+v; want why, and how to re-pin", got.Error)
	}
	hidden := connectRaw(t, newGateway(t, newReg(t), Options{Gate: screenOut{hidden: "mcp__s__changed"}}))
	answeredAsNone(t, hidden, plain, "mcp__s__changed")
}
