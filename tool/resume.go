package tool

import (
	"context"
	"errors"
)

type resumeKey struct{}

// WithResume returns a context whose call of a tool, instead of starting
// new work, follows the work id its source gave an earlier call of the
// same tool (WithTaskStarted), possibly made by another process, to its
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

// ErrHandedOver is the cause a consumer ends a call's context with when
// another process follows the call's work from then on (WithResume, by
// the id WithTaskStarted gave): the source stops following the work
// without cancelling it where it runs. A gateway replica that stops
// hands its followable tasks to the others so.
var ErrHandedOver = errors.New("the work is handed over to another process, which follows it from here")
