package tool

import "context"

type workStartedKey struct{}

type resumeKey struct{}

// WithWorkStarted returns a context whose background call (WithBackground)
// tells fn the id its source gave the work, once it has one, when another
// process may follow that work by id (for an MCP server over HTTP, the
// id of the task it made; a stdio server's tasks die with its process and
// are not told). A consumer that keeps its calls where other processes
// read them records the id, so that one of them can follow the work
// (WithResume) when this process is gone. fn must return quickly.
func WithWorkStarted(ctx context.Context, fn func(id string)) context.Context {
	return context.WithValue(ctx, workStartedKey{}, fn)
}

// WorkStartedFrom returns the function WithWorkStarted set, nil when none.
func WorkStartedFrom(ctx context.Context) func(id string) {
	fn, _ := ctx.Value(workStartedKey{}).(func(string))
	return fn
}

// WithResume returns a context whose call of a tool, instead of starting
// new work, follows the work id its source gave an earlier call of the
// same tool (WithWorkStarted), possibly made by another process, to its
// result. A source that cannot follow it (a tool with no background
// work, a stdio server) fails the call saying why.
func WithResume(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, resumeKey{}, id)
}

// ResumeFrom returns the work id WithResume set, "" when none.
func ResumeFrom(ctx context.Context) string {
	id, _ := ctx.Value(resumeKey{}).(string)
	return id
}
