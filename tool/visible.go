package tool

import "context"

// visibleKey carries a caller's filter of tool names in a context.
type visibleKey struct{}

// WithVisible returns ctx saying which public tool names its caller may
// use: a tool that lists or finds tools for the caller (a search) leaves
// out those allowed rejects. A gateway's policy sets it on each call.
func WithVisible(ctx context.Context, allowed func(name string) bool) context.Context {
	return context.WithValue(ctx, visibleKey{}, allowed)
}

// Visible returns the filter of WithVisible; nil when ctx has none (every
// tool may be used).
func Visible(ctx context.Context) func(name string) bool {
	f, _ := ctx.Value(visibleKey{}).(func(string) bool)
	return f
}
