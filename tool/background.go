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

type taskStartedKey struct{}

// WithTaskStarted returns a context whose tool calls tell started when
// their source makes a task of the call (a background call's, or one a
// server of the 2026-07-28 tasks extension decides on, maybe after rounds
// of input-required results): the call runs on until the task ends. A
// gateway makes its own task for its client then (Tool.ServerTasks).
// started gets the id under which another process may follow the task
// (WithResume): for an MCP server over HTTP, the id of the task it made;
// "" when none can (a stdio server's tasks die with its process). A
// consumer that keeps its calls where other processes read them records
// the id, so that one of them can follow the work when this process is
// gone. started must return quickly.
func WithTaskStarted(ctx context.Context, started func(id string)) context.Context {
	return context.WithValue(ctx, taskStartedKey{}, started)
}

// TaskStarted tells the listener of ctx (WithTaskStarted), if there is
// one, that the source made a task of the call, followable by id ("" when
// no other process can follow it): what a source calls when it does,
// before it follows the task.
func TaskStarted(ctx context.Context, id string) {
	if started, _ := ctx.Value(taskStartedKey{}).(func(string)); started != nil {
		started(id)
	}
}
