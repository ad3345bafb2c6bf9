package tool_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpbridge/mcpbridge/tool"
)

type session struct{ done chan struct{} }

func (s session) Done() <-chan struct{} { return s.done }

// WithConsumer sets each member it has as its With function would, and
// leaves the parent's for those it has not; the context's cancellation
// and other values are the parent's.
func TestWithConsumerSetsItsMembers(t *testing.T) {
	var logged, progressed, asked string
	parent, cancel := context.WithCancelCause(context.Background())
	parent = tool.WithProgress(parent, func(tool.Progress) { progressed = "parent" })
	parent = tool.WithCaller(parent, map[string]any{"who": "parent"})
	s := session{done: make(chan struct{})}
	ctx := tool.WithConsumer(parent, tool.Consumer{
		Log:     func(json.RawMessage) { logged = "consumer" },
		Ask:     func(context.Context, tool.Ask) (json.RawMessage, error) { asked = "consumer"; return nil, nil },
		Session: s,
	})
	tool.LogFrom(ctx)(nil)
	tool.ProgressFrom(ctx)(tool.Progress{})
	tool.AskFrom(ctx)(ctx, tool.Ask{})
	if logged != "consumer" || asked != "consumer" || progressed != "parent" {
		t.Errorf("log %q, ask %q, progress %q; want the consumer's log and ask, the parent's progress", logged, asked, progressed)
	}
	if tool.SessionFrom(ctx) != s || tool.CallerFrom(ctx)["who"] != "parent" {
		t.Errorf("session %v, caller %v; want the consumer's session, the parent's caller", tool.SessionFrom(ctx), tool.CallerFrom(ctx))
	}
	ctx = tool.WithConsumer(ctx, tool.Consumer{Progress: func(tool.Progress) { progressed = "inner" }})
	tool.ProgressFrom(ctx)(tool.Progress{})
	if progressed != "inner" || tool.SessionFrom(ctx) != s {
		t.Errorf("progress %q, session %v; want the inner consumer's progress and the outer's session", progressed, tool.SessionFrom(ctx))
	}
	if bare := tool.WithConsumer(context.Background(), tool.Consumer{}); tool.LogFrom(bare) != nil || tool.AskFrom(bare) != nil || tool.SessionFrom(bare) != nil || tool.ProgressFrom(bare) != nil {
		t.Error("an empty consumer offers something")
	}
	child, stop := context.WithCancel(ctx)
	defer stop()
	cancel(context.DeadlineExceeded)
	<-child.Done()
	if context.Cause(ctx) != context.DeadlineExceeded {
		t.Errorf("cause %v, want the parent's", context.Cause(ctx))
	}
}

// A ConsumerContext kept in a caller's own struct carries its consumer
// as WithConsumer's context does.
func TestConsumerContextBinds(t *testing.T) {
	var kept struct {
		other int
		cc    tool.ConsumerContext
	}
	logged := false
	ctx := kept.cc.Bind(tool.WithCaller(context.Background(), map[string]any{"who": "parent"}),
		tool.Consumer{Log: func(json.RawMessage) { logged = true }, Forwards: "mcp__a__echo"})
	tool.LogFrom(ctx)(nil)
	if !logged || tool.ForwardsFrom(ctx) != "mcp__a__echo" || tool.CallerFrom(ctx)["who"] != "parent" || tool.AskFrom(ctx) != nil {
		t.Errorf("logged %v, forwards %q, caller %v, ask set %v; want the consumer's log and forwards, the parent's caller, no ask",
			logged, tool.ForwardsFrom(ctx), tool.CallerFrom(ctx), tool.AskFrom(ctx) != nil)
	}
}

// Forwards names one call's tool: a consumer layer beneath (a call a tool
// makes with its call's context, through another consumer) speaks for its
// own call, forwarding or not, and a context without one forwards nothing.
func TestConsumerForwardsIsTheLayers(t *testing.T) {
	if got := tool.ForwardsFrom(context.Background()); got != "" {
		t.Errorf("no consumer forwards %q", got)
	}
	outer := tool.WithConsumer(context.Background(), tool.Consumer{Forwards: "mcp__a__echo"})
	if got := tool.ForwardsFrom(tool.WithCaller(outer, map[string]any{})); got != "mcp__a__echo" {
		t.Errorf("forwards %q, want mcp__a__echo", got)
	}
	if got := tool.ForwardsFrom(tool.WithConsumer(outer, tool.Consumer{})); got != "" {
		t.Errorf("an inner consumer that forwards nothing forwards %q, the outer's", got)
	}
}
