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
	// Forwards is the registry name of the tool whose result the
	// consumer forwards as its source sent it (Result.Wire), reading
	// neither Content nor Value when there is a Wire: such a source may
	// leave them out and skip building them (ForwardsFrom). Naming the
	// tool keeps the calls a tool makes beneath with the same context (a
	// program calling tools) from being taken for it.
	Forwards string
}

// WithConsumer returns ctx carrying c's members as the With functions
// would, in one context layer: a gateway sets them on every call, and
// each layer is an allocation and a step more for every lookup beneath
// it. A nil member leaves what ctx carries; Forwards is always the
// layer's own, as it speaks for this consumer's call alone.
func WithConsumer(ctx context.Context, c Consumer) context.Context {
	return new(ConsumerContext).Bind(ctx, c)
}

// ConsumerContext is the context WithConsumer makes, as a value: a
// caller that makes other things for each call keeps it among them, so
// that it is no allocation of its own. Its zero value is ready to Bind.
type ConsumerContext struct{ consumerCtx }

// Bind makes cc carry c's members over ctx, as WithConsumer does, and
// returns it as a context. cc must not be bound again while that context
// is in use.
func (cc *ConsumerContext) Bind(ctx context.Context, c Consumer) context.Context {
	cc.consumerCtx = consumerCtx{Context: ctx, c: c}
	return &cc.consumerCtx
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
	case forwardsKey:
		return &ctx.c // a pointer: a string in an interface would be an allocation a lookup
	}
	return ctx.Context.Value(key)
}

type forwardsKey struct{}

// ForwardsFrom returns the name of the tool whose result the consumer of
// ctx forwards as its source sent it (Consumer.Forwards), "" when it
// forwards none. A source whose tool is named returns its Wire alone on
// success, still checked as for any consumer.
func ForwardsFrom(ctx context.Context) string {
	if c, _ := ctx.Value(forwardsKey{}).(*Consumer); c != nil {
		return c.Forwards
	}
	return ""
}
