package mcpclient

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/tool"
)

// clientOf is a consumer's session (a gateway client's) in these tests.
type clientOf struct{ name string }

func (*clientOf) Done() <-chan struct{} { return nil }

// twoAsksServer is a 2025-11-25 server whose tool "two" elicits once,
// then again once hold (another call's tool) is in flight, while the
// first question is still unanswered: both questions are the call of
// "two"'s. second gets the answer to the second question.
func twoAsksServer(holding, release chan struct{}, second chan<- string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "two", Version: "1"}, nil)
	q := func(msg string) *mcp.ElicitParams {
		return &mcp.ElicitParams{Message: msg, RequestedSchema: json.RawMessage(`{"type":"object","properties":{"card":{"type":"string"}}}`)}
	}
	srv.AddTool(&mcp.Tool{Name: "two", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		first := make(chan struct{})
		go func() {
			defer close(first)
			_, _ = req.Session.Elicit(ctx, q("your name?"))
		}()
		<-holding
		res, err := req.Session.Elicit(ctx, q("your card number?"))
		if err != nil {
			second <- "error: " + err.Error()
		} else {
			second <- res.Action
		}
		<-first
		return textResult("done"), nil
	})
	srv.AddTool(&mcp.Tool{Name: "hold", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		close(holding)
		<-release
		return textResult("held"), nil
	})
	return srv
}

// On 2025-11-25 over a connection with no stream per call, a server may
// ask again while its first question to a call's client is unanswered.
// Another client's call in flight meanwhile is not taken for the one
// asking: the second question is declined, never put to that client.
// Calls of one client still tell themselves apart: the other call is
// then the only one that can ask, and gets it.
func TestWaitingCallsQuestionNotHandedToAnotherClient(t *testing.T) {
	for _, c := range []struct {
		name      string
		same      bool
		want      string
		yAskCount int64
	}{
		{"another client", false, "decline", 0},
		{"the same client", true, "accept", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			holding, release, second := make(chan struct{}), make(chan struct{}), make(chan string, 1)
			cfg := stdioConfig("two")
			cfg.ProtocolVersion = "2025-11-25"
			h := mustStart(t, cfg, Options{Elicit: true, NewTransport: inMemory(t, twoAsksServer(holding, release, second))})

			asked, answer := make(chan struct{}), make(chan struct{})
			x := &clientOf{"x"}
			xAsk := func(ctx context.Context, _ tool.Ask) (json.RawMessage, error) {
				close(asked)
				<-answer
				return json.RawMessage(`{"action":"accept","content":{"card":"x"}}`), nil
			}
			xCtx := tool.WithSession(tool.WithAsk(context.Background(), xAsk), x)
			xDone := make(chan tool.Result, 1)
			go func() { r, _ := h.reg.Execute(xCtx, "mcp__two__two", nil); xDone <- r }()
			waitSignal(t, asked, "x to be asked its first question")

			var yAsked atomic.Int64
			yAsk := func(ctx context.Context, q tool.Ask) (json.RawMessage, error) {
				yAsked.Add(1)
				return json.RawMessage(`{"action":"accept","content":{"card":"y"}}`), nil
			}
			y := tool.Session(&clientOf{"y"})
			if c.same {
				y = x
			}
			yCtx := tool.WithSession(tool.WithAsk(context.Background(), yAsk), y)
			yDone := make(chan tool.Result, 1)
			go func() { r, _ := h.reg.Execute(yCtx, "mcp__two__hold", nil); yDone <- r }()

			var got string
			select {
			case got = <-second:
			case <-time.After(20 * time.Second):
				t.Fatal("timed out waiting for the second question's answer")
			}
			close(answer)
			close(release)
			<-xDone
			<-yDone
			if got != c.want || yAsked.Load() != c.yAskCount {
				t.Errorf("the second question of x's call: %q, y asked %d times; want %q, %d", got, yAsked.Load(), c.want, c.yAskCount)
			}
		})
	}
}
