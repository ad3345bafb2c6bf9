package tool

import "context"

// Consumer is what the consumer making a call offers its source, as
// WithLog, WithProgress, WithAsk and WithSession set it one at a time:
// where its log messages and progress go, who answers its requests, and
// the session it belongs to. A nil member offers nothing of its own.
type Consumer struct {
	Log      LogFunc
	Progress ProgressFunc
	Ask      AskFunc
	Session  Session
}

// WithConsumer returns ctx carrying c's members as the With functions
// would, in one context layer: a gateway sets them on every call, and
// each layer is an allocation and a step more for every lookup beneath
// it. A nil member leaves what ctx carries.
func WithConsumer(ctx context.Context, c Consumer) context.Context {
	return &consumerCtx{Context: ctx, c: c}
}

// consumerCtx is a context carrying a Consumer. Everything but Value is
// its parent's, so the context package sees through it as through a
// context.WithValue.
type consumerCtx struct {
	context.Context
	c Consumer
}

func (ctx *consumerCtx) Value(key any) any {
	switch key.(type) {
	case logKey:
		if ctx.c.Log != nil {
			return ctx.c.Log
		}
	case progressKey:
		if ctx.c.Progress != nil {
			return ctx.c.Progress
		}
	case askKey:
		if ctx.c.Ask != nil {
			return ctx.c.Ask
		}
	case sessionKey:
		if ctx.c.Session != nil {
			return ctx.c.Session
		}
	}
	return ctx.Context.Value(key)
}
