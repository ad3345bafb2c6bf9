package tool

import "context"

type backgroundKey struct{}

// WithBackground returns a context whose tool calls run as background
// work where their source offers it (for an MCP server, a tool whose
// execution.taskSupport is "optional" is called as a task, polled until
// it ends); a source that offers no such mode runs the call as usual. A
// source that requires it (taskSupport "required") uses it whatever the
// context says.
func WithBackground(ctx context.Context) context.Context {
	return context.WithValue(ctx, backgroundKey{}, true)
}

// BackgroundFrom reports whether ctx asks for background work.
func BackgroundFrom(ctx context.Context) bool {
	b, _ := ctx.Value(backgroundKey{}).(bool)
	return b
}
