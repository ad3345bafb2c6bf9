package tool_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpbridge/mcpbridge/tool"
)

// A consumer's ask and log functions travel with the call's context to its
// source; a context without them has none.
func TestAskAndLogTravelWithTheContext(t *testing.T) {
	ctx := context.Background()
	if tool.AskFrom(ctx) != nil || tool.LogFrom(ctx) != nil {
		t.Fatal("a bare context carries an ask or log function")
	}
	var logged string
	ctx = tool.WithAsk(ctx, func(_ context.Context, a tool.Ask) (json.RawMessage, error) {
		return json.RawMessage(`{"asked":"` + a.Method + `"}`), nil
	})
	ctx = tool.WithLog(ctx, func(p json.RawMessage) { logged = string(p) })
	ans, err := tool.AskFrom(ctx)(ctx, tool.Ask{Method: tool.AskElicit})
	if err != nil || string(ans) != `{"asked":"elicitation/create"}` {
		t.Errorf("ask: %s, %v", ans, err)
	}
	tool.LogFrom(ctx)(json.RawMessage(`{"level":"info"}`))
	if logged != `{"level":"info"}` {
		t.Errorf("logged %q", logged)
	}
}
