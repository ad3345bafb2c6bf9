package tool

import "context"

// Progress is one progress update of a call in flight: how far it is, the
// total when known (else 0), and an optional message.
type Progress struct {
	Progress float64
	Total    float64
	Message  string
}

// ProgressFunc receives the progress updates of one call. It is called on
// the source's own goroutine (for an MCP server, the connection's
// notification goroutine), so it must return quickly and never block.
type ProgressFunc func(Progress)

type progressKey struct{}

// WithProgress returns a context whose tool calls report their progress to
// fn. A consumer (a CLI spinner, a gateway forwarding to its client) sets
// it before Registry.Execute; a source asks ProgressFrom whether anyone
// listens (an MCP server is then sent a progress token).
func WithProgress(ctx context.Context, fn ProgressFunc) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// ProgressFrom returns the ProgressFunc of ctx, or nil when no one listens.
func ProgressFrom(ctx context.Context) ProgressFunc {
	fn, _ := ctx.Value(progressKey{}).(ProgressFunc)
	return fn
}

// ReportProgress reports p to the listener of ctx, if there is one: what a
// tool body written in Go calls as it works.
func ReportProgress(ctx context.Context, p Progress) {
	if fn := ProgressFrom(ctx); fn != nil {
		fn(p)
	}
}
