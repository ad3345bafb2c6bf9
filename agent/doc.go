// Package agent is a small agent loop over a tool.Registry: it sends the
// conversation and the tools a model should see (the whole catalog, or a
// toolview's deferred-loading selection) to an OpenAI-compatible chat
// model, streams its reasoning and answer as events, asks an Approver
// before each tool call, runs the calls of one turn concurrently and sends
// their results back in order under their ids, until the model answers
// without calling a tool or the step limit is reached.
//
// It follows DeepSeek's rules, where generic loops do not: the reasoning
// of a turn that made tool calls goes back with it (thinking mode answers
// 400 otherwise), tools keep a stable order (so the prefix cache hits),
// and strict function calling is used where the tools' schemas allow it.
// A result over the token cap is cut, the whole of it written to a file
// the model is told about.
//
// An Agent is used by one goroutine at a time: Run one prompt after the
// other. The CLI's `mcpbridge agent` is its terminal; a Go harness can
// embed it the same way.
package agent
