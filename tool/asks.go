package tool

import (
	"context"
	"encoding/json"
)

// Ask is a request a source makes of the consumer while it serves a call:
// for an MCP server, a form or URL to fill in (Method "elicitation/create"),
// a model completion ("sampling/createMessage") or the roots in scope
// ("roots/list": a consumer with no roots of its own fails it, and the
// source answers with its configured ones). Params and the answer are the protocol's JSON, so a
// consumer can forward them as they are.
type Ask struct {
	Method string
	Params json.RawMessage
	// Server names the server that asks (its source's server name), so
	// a terminal can say who asks and a sampler whom it answered; "" when
	// the source has no server.
	Server string
}

// The methods of Ask a consumer may be asked.
const (
	AskElicit = "elicitation/create"
	AskSample = "sampling/createMessage"
	AskRoots  = "roots/list"
)

// AskFunc answers an Ask: the result JSON, or an error the source reports
// to its server. It may block (a person answers a form) until ctx ends.
type AskFunc func(ctx context.Context, a Ask) (json.RawMessage, error)

// LogFunc receives the log messages a source sends during a call (for an
// MCP server, the params of notifications/message). Like a ProgressFunc it
// runs on the source's goroutine and must never block.
type LogFunc func(params json.RawMessage)

type askKey struct{}

type logKey struct{}

// WithAsk returns a context whose tool calls put their sources' requests
// to fn: the consumer that made the call answers them (a terminal asks the
// person, a gateway forwards to its client).
func WithAsk(ctx context.Context, fn AskFunc) context.Context {
	return context.WithValue(ctx, askKey{}, fn)
}

// AskFrom returns the AskFunc of ctx, or nil.
func AskFrom(ctx context.Context) AskFunc {
	fn, _ := ctx.Value(askKey{}).(AskFunc)
	return fn
}

// WithLog returns a context whose tool calls send their sources' log
// messages to fn.
func WithLog(ctx context.Context, fn LogFunc) context.Context {
	return context.WithValue(ctx, logKey{}, fn)
}

// LogFrom returns the LogFunc of ctx, or nil.
func LogFrom(ctx context.Context) LogFunc {
	fn, _ := ctx.Value(logKey{}).(LogFunc)
	return fn
}

// InputsFunc answers a whole round of a source's requests made at once
// (for an MCP server of protocol 2026-07-28, the inputRequests of an
// input-required result), each under the source's own key: the answers
// under the same keys. A consumer that passes a round on as it is, keys
// and all (a gateway to a client it asks by input-required results
// too), sets one with WithInputs; without one, a source asks each
// request alone through the AskFunc. Like an AskFunc it may block until
// ctx ends.
type InputsFunc func(ctx context.Context, round map[string]Ask) (map[string]json.RawMessage, error)

type inputsKey struct{}

// WithInputs returns a context whose tool calls put a round of their
// sources' requests to fn at once.
func WithInputs(ctx context.Context, fn InputsFunc) context.Context {
	return context.WithValue(ctx, inputsKey{}, fn)
}

// InputsFrom returns the InputsFunc of ctx, or nil.
func InputsFrom(ctx context.Context) InputsFunc {
	fn, _ := ctx.Value(inputsKey{}).(InputsFunc)
	return fn
}
