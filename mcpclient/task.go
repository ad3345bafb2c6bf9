package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/internal/sdkwire"
	"github.com/mcpbridge/mcpbridge/internal/tasks"
	"github.com/mcpbridge/mcpbridge/tool"
)

// callTask calls rawName as a task (execution.taskSupport "required", or
// "optional" when the consumer asks for background work): the tools/call
// creates it, internal/tasks follows it to its result, which comes back
// as a tools/call result would. The whole task is bounded by
// toolCallTimeoutMs; a task the caller gives up on is cancelled.
func (s *Server) callTask(ctx context.Context, gen *generation, rawName string, args json.RawMessage) (json.RawMessage, error) {
	callCtx, booked := s.callContext(ctx, gen)
	defer booked.leave()
	send := &taskSender{s: s, gen: gen}
	params := tasks.Augment(s.cfg.ToolCallTimeout)
	params["name"], _ = json.Marshal(rawName)
	params["arguments"] = args
	raw, err := send.send(callCtx, "tools/call", params, false)
	if err != nil {
		return nil, s.taskFailed(ctx, callCtx, gen, rawName, err)
	}
	return s.followTask(ctx, callCtx, gen, rawName, raw)
}

// followTask returns raw, the result of tools/call rawName, when it is final,
// and else follows the task it created to its result, within callCtx.
func (s *Server) followTask(ctx, callCtx context.Context, gen *generation, rawName string, raw json.RawMessage) (json.RawMessage, error) {
	task, err := tasks.Created(raw)
	if err != nil {
		return nil, fmt.Errorf("server %q: tools/call %q: %w", s.cfg.ServerName, rawName, err)
	}
	if task == nil {
		return raw, nil // answered at once
	}
	s.log.Debug("task created", "tool", rawName, "task", task.TaskID)
	followable := task.TaskID
	if s.cfg.Transport == TransportStdio {
		followable = "" // the task dies with the child: no other process follows it
	}
	tool.TaskStarted(ctx, followable)
	return s.awaitTask(ctx, callCtx, gen, rawName, *task)
}

// resumeTask returns the call of a tool that follows task id, made by an
// earlier call of it, maybe from another process (tool.WithResume),
// instead of calling the tool again.
func (s *Server) resumeTask(id string) func(context.Context, *generation, string, json.RawMessage) (json.RawMessage, error) {
	return func(ctx context.Context, gen *generation, rawName string, _ json.RawMessage) (json.RawMessage, error) {
		if s.cfg.Transport == TransportStdio {
			return nil, fmt.Errorf("server %q runs as a child of this process (stdio): task %s of tools/call %q, made by another process's child, cannot be followed from here; call the tool again", s.cfg.ServerName, id, rawName)
		}
		callCtx, booked := s.callContext(ctx, gen)
		defer booked.leave()
		s.log.Debug("task resumed", "tool", rawName, "task", id)
		return s.awaitTask(ctx, callCtx, gen, rawName, tasks.Task{TaskID: id, Status: tasks.Working})
	}
}

// awaitTask follows task, made by tools/call rawName, to its result,
// within callCtx.
func (s *Server) awaitTask(ctx, callCtx context.Context, gen *generation, rawName string, task tasks.Task) (json.RawMessage, error) {
	opts := tasks.Options{
		OnStatus: taskStatus(ctx),
		Answer: func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
			return s.askRaw(ctx, method, params)
		},
	}
	if fn := tool.InputsFrom(ctx); fn != nil {
		// A consumer that takes rounds (a gateway) gets the task's
		// questions as they came: all at once, under the server's keys.
		opts.AnswerRound = func(ctx context.Context, round map[string]json.RawMessage) (map[string]json.RawMessage, error) {
			return s.relayRound(ctx, fn, round)
		}
	}
	raw, err := tasks.Await(callCtx, &taskSender{s: s, gen: gen}, task, opts)
	if err != nil {
		return nil, s.taskFailed(ctx, callCtx, gen, rawName, failedWire(err))
	}
	return raw, nil
}

// relayRound answers the inputRequests of a task's round through fn
// (relayInputs), under the server's keys.
func (s *Server) relayRound(ctx context.Context, fn tool.InputsFunc, round map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	raw, _ := json.Marshal(round) // never fails: the round was decoded from JSON
	var requests mcp.InputRequestMap
	if err := json.Unmarshal(raw, &requests); err != nil {
		return nil, fmt.Errorf("reading the task's input requests: %w", err)
	}
	responses, err := s.relayInputs(ctx, fn, requests)
	if err != nil {
		return nil, err
	}
	out := make(map[string]json.RawMessage, len(responses))
	for key, resp := range responses {
		out[key], _ = json.Marshal(resp) // never fails: decoded from JSON (decodeInput)
	}
	return out, nil
}

// failedWire is err, the end of a task, with the JSON-RPC error a failed
// task carries made the server's error it is (serverError), as a
// request answered with it would be: a gateway forwards it as that error.
func failedWire(err error) error {
	failed, ok := errors.AsType[*tasks.FailedError](err)
	if !ok {
		return err
	}
	return &serverError{failed.Error(), &jsonrpc.Error{Code: int64(failed.Wire.Code), Message: failed.Wire.Message}}
}

// serverDecidesTasks reports whether gen's server declares the
// 2026-07-28 tasks extension, under which it decides per call whether a
// call becomes a task (tool.Tool.ServerTasks).
func serverDecidesTasks(gen *generation) bool {
	caps := capabilities(gen)
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[tasks.Extension]
	return ok
}

// taskStatus shows a task's status to the call's progress listener, as a
// progress message (a terminal prints it as it prints progress).
func taskStatus(ctx context.Context) func(tasks.Task) {
	fn := tool.ProgressFrom(ctx)
	if fn == nil {
		return nil
	}
	return func(t tasks.Task) {
		msg := "task " + t.Status
		if t.StatusMessage != "" {
			msg += ": " + t.StatusMessage
		}
		fn(tool.Progress{Message: msg})
	}
}

// taskFailed says why a task call ended early, as callFailed does for a
// plain call.
func (s *Server) taskFailed(ctx, callCtx context.Context, gen *generation, rawName string, err error) error {
	if errors.Is(context.Cause(callCtx), errCallTimeout) && ctx.Err() == nil {
		return &timeoutError{fmt.Sprintf("server %q did not finish the task of tools/call %q within toolCallTimeoutMs (%dms); the task was cancelled", s.cfg.ServerName, rawName, s.cfg.ToolCallTimeout.Milliseconds())}
	}
	if callCtx.Err() != nil {
		return s.callFailed(ctx, callCtx, gen, rawName, err)
	}
	return fmt.Errorf("server %q: %w", s.cfg.ServerName, err)
}

// taskSender sends the requests of tasks beneath the SDK, which has no
// methods for them (internal/sdkwire, assumption 27).
type taskSender struct {
	s   *Server
	gen *generation
}

var _ tasks.Sender = (*taskSender)(nil)

func (t *taskSender) Send(ctx context.Context, method string, params map[string]json.RawMessage) (json.RawMessage, error) {
	return t.send(ctx, method, params, true)
}

// send sends method with params (replacing the vehicle's, or added to a
// tools/call's own) and returns the captured result.
func (t *taskSender) send(ctx context.Context, method string, params map[string]json.RawMessage, replace bool) (json.RawMessage, error) {
	slot := sdkwire.NewRewriteSlot(sdkwire.Rewrite{Method: method, Params: params, Replace: replace})
	var name string
	_ = json.Unmarshal(params["name"], &name)
	_, err := t.gen.session.CallTool(sdkwire.WithSlot(ctx, slot), &mcp.CallToolParams{Name: name, Meta: t.s.requestMeta(t.gen)})
	t.gen.table.Forget(slot)
	if err != nil && !sdkwire.Captured(err) {
		if ctx.Err() != nil {
			t.gen.table.ExpectCancel() // the SDK tells the server on a goroutine of its own
		}
		return nil, describeCallError(err)
	}
	if err := slot.Refused(); err != nil {
		return nil, err
	}
	raw, ok := slot.Result()
	if !ok {
		return nil, fmt.Errorf("the %s result was not captured", method)
	}
	return raw, nil
}
