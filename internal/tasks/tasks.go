// Package tasks runs a request the client made as an MCP task (the tasks
// capability of protocol 2025-11-25, SEP-1686): it reads the task a
// request created, polls tasks/get at the interval the server asks for,
// fetches tasks/result once the task is done or waits for input, and
// cancels the task (tasks/cancel) when the caller gives up, unless it
// hands the task over to another process (tool.ErrHandedOver).
//
// It knows the wire shapes and the order of requests, not how they are
// sent: a Sender does that (mcpclient sends them beneath the go-sdk, which
// has no tasks, through internal/sdkwire's rewritten requests).
package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mcpbridge/mcpbridge/tool"
)

// Statuses of a task.
const (
	Working       = "working"
	InputRequired = "input_required"
	Completed     = "completed"
	Failed        = "failed"
	Cancelled     = "cancelled"
)

// Bounds on the poll interval a server asks for: a server cannot make the
// client spin, nor leave it asleep long after the task has finished.
const (
	DefaultPoll = time.Second
	MinPoll     = 50 * time.Millisecond
	MaxPoll     = 10 * time.Second
)

// MaxInputRequests bounds the questions one round may ask (a tasks/get,
// an input-required result): each goes to a person or a model.
const MaxInputRequests = 16

// cancelWait bounds tasks/cancel sent after the caller gave up.
const cancelWait = 5 * time.Second

// Task is the state of a task as the server reports it: the 2025-11-25
// shape, or the 2026-07-28 extension's (io.modelcontextprotocol/tasks),
// which names the interval pollIntervalMs and carries a terminal task's
// result or error, and the requests of an input_required one, inline.
type Task struct {
	TaskID         string  `json:"taskId"`
	Status         string  `json:"status"`
	StatusMessage  string  `json:"statusMessage,omitempty"`
	PollInterval   float64 `json:"pollInterval,omitempty"`   // milliseconds; 0: not given
	PollIntervalMs float64 `json:"pollIntervalMs,omitempty"` // the extension's name for it

	Result        json.RawMessage            `json:"result,omitempty"`
	Error         *WireError                 `json:"error,omitempty"`
	InputRequests map[string]json.RawMessage `json:"inputRequests,omitempty"`

	// Extension is set for a task the extension's server made
	// ("resultType":"task", Created): tasks/get carries its end inline,
	// and tasks/result is gone.
	Extension bool `json:"-"`
}

// WireError is a JSON-RPC error as a failed task carries it.
type WireError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// FailedError is the end of an extension task that failed: the JSON-RPC
// error it carries, as the server sent it, which a gateway passes on as
// the error it is (not as a tool's error result).
type FailedError struct {
	TaskID string
	Wire   WireError
}

func (e *FailedError) Error() string {
	return fmt.Sprintf("task %s failed: MCP error %d: %s", e.TaskID, e.Wire.Code, e.Wire.Message)
}

// Extension is the name of the 2026-07-28 tasks extension, which a client
// declares under capabilities.extensions.
const Extension = "io.modelcontextprotocol/tasks"

// Sender sends one request to the server and returns its raw result; a
// JSON-RPC error comes back as an error. params are the request's fields.
type Sender interface {
	Send(ctx context.Context, method string, params map[string]json.RawMessage) (json.RawMessage, error)
}

// Augment returns the field that makes a request a task ("task", SEP-1686)
// asking the server to keep it ttl after it ends.
func Augment(ttl time.Duration) map[string]json.RawMessage {
	return map[string]json.RawMessage{"task": json.RawMessage(fmt.Sprintf(`{"ttl":%d}`, ttl.Milliseconds()))}
}

// Created reads the result of a request that may have created a task:
// the task, or nil when the server answered with the final result (a
// server may run an optional task at once; under the extension it decides
// per request). A 2025-11-25 task is {"task":{...}}; the extension's has
// "resultType":"task", its fields at the top or under "task".
func Created(result json.RawMessage) (*Task, error) {
	if !bytes.Contains(result, []byte(`"task`)) {
		return nil, nil // the common case, without decoding
	}
	var top struct {
		ResultType string `json:"resultType"`
		Task       *Task  `json:"task"`
	}
	if err := json.Unmarshal(result, &top); err != nil {
		return nil, fmt.Errorf("reading the created task: %w", err)
	}
	if top.Task == nil && top.ResultType == "task" {
		top.Task = &Task{}
		if err := json.Unmarshal(result, top.Task); err != nil {
			return nil, fmt.Errorf("reading the created task: %w", err)
		}
	}
	if top.Task == nil || top.ResultType != "" && top.ResultType != "task" {
		return nil, nil
	}
	if err := top.Task.check(); err != nil {
		return nil, fmt.Errorf("the created task: %w", err)
	}
	top.Task.Extension = top.ResultType == "task"
	return top.Task, nil
}

// IsExtensionTask reports whether result is the task the extension's
// server made of a request ("resultType":"task").
func IsExtensionTask(result json.RawMessage) bool {
	if !bytes.Contains(result, []byte(`"task"`)) {
		return false // the common case, without decoding
	}
	var top struct {
		ResultType string `json:"resultType"`
	}
	return json.Unmarshal(result, &top) == nil && top.ResultType == "task"
}

func (t *Task) check() error {
	if t.TaskID == "" {
		return errors.New("taskId is missing or empty")
	}
	switch t.Status {
	case Working, InputRequired, Completed, Failed, Cancelled:
		return nil
	}
	return fmt.Errorf("task %q has the unknown status %q", t.TaskID, t.Status)
}

// poll is how long to wait before asking for t's status again.
func (t *Task) poll() time.Duration {
	ms := max(t.PollInterval, t.PollIntervalMs)
	if ms <= 0 {
		return DefaultPoll
	}
	return min(max(time.Duration(ms*float64(time.Millisecond)), MinPoll), MaxPoll)
}

// Options tune Await. The zero value is ready to use.
type Options struct {
	// OnStatus is told each status the task reports (the first included),
	// when status or message changed. It must return quickly.
	OnStatus func(Task)
	// Answer answers one of the inputRequests of an extension task
	// waiting for input (method and params as the server wrote them);
	// nil declines them all.
	Answer func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
	// AnswerRound, when set, answers every unanswered inputRequest of
	// an extension task waiting for input at once, under their keys
	// (requests as the server wrote them, {"method":…,"params":…}),
	// instead of Answer: a gateway passes the round to its client as it
	// came.
	AnswerRound func(ctx context.Context, round map[string]json.RawMessage) (map[string]json.RawMessage, error)
	// After waits d; nil is time.After (tests inject a clock).
	After func(d time.Duration) <-chan time.Time
}

// Await follows task t until it ends and returns its result: inline
// (the extension), or from tasks/result (2025-11-25). When ctx ends
// first, it cancels the task (tasks/cancel, on a context of its own) and
// returns ctx's cause; a cause of tool.ErrHandedOver (another process
// follows the task from then on) leaves the task running.
func Await(ctx context.Context, s Sender, t Task, opts Options) (json.RawMessage, error) {
	after := opts.After
	if after == nil {
		after = time.After
	}
	answered := map[string]bool{}
	getAtOnce := true   // once, for an extension task that ended as it was made
	var shown [2]string // the status and message last reported
	for {
		if now := [2]string{t.Status, t.StatusMessage}; now != shown && opts.OnStatus != nil {
			opts.OnStatus(t)
			shown = now
		}
		if raw, err, done := inline(t); done {
			return raw, err
		}
		switch {
		case t.Status == InputRequired && len(t.InputRequests) > 0:
			if err := update(ctx, s, t, opts, answered); err != nil {
				return nil, err
			}
		case t.Extension && t.Status != Working && t.Status != Cancelled:
			// A task that ended (or asks) as it was made carries no result
			// or questions yet: tasks/get has them, at once.
			if !getAtOnce {
				return nil, fmt.Errorf("task %s is %s but tasks/get carries neither its result nor its questions", t.TaskID, t.Status)
			}
			getAtOnce = false
			next, err := get(ctx, s, t.TaskID)
			if err != nil {
				return nil, err
			}
			next.Extension = true
			t = next
			continue
		case t.Status == Completed, t.Status == Failed, t.Status == InputRequired:
			// tasks/result blocks while the task waits for input: the
			// server's questions arrive meanwhile, as requests to the client.
			return result(ctx, s, t)
		case t.Status == Cancelled:
			return nil, fmt.Errorf("task %s was cancelled by the server%s", t.TaskID, suffix(t.StatusMessage))
		}
		next, err := poll(ctx, s, t, after)
		if err != nil {
			return nil, err
		}
		t = next
	}
}

// poll waits t's interval and gets its state; a caller who gave up
// meanwhile cancels the task.
func poll(ctx context.Context, s Sender, t Task, after func(time.Duration) <-chan time.Time) (Task, error) {
	select {
	case <-ctx.Done():
		return Task{}, cancel(ctx, s, t.TaskID)
	case <-after(t.poll()):
	}
	next, err := get(ctx, s, t.TaskID)
	if err != nil && ctx.Err() != nil {
		return Task{}, cancel(ctx, s, t.TaskID)
	}
	next.Extension = t.Extension
	return next, err
}

// inline returns the result or error an extension task carries, and
// whether it carried one.
func inline(t Task) (json.RawMessage, error, bool) {
	switch {
	case t.Status == Completed && len(t.Result) > 0:
		return t.Result, nil, true
	case t.Status == Failed && t.Error != nil:
		return nil, &FailedError{TaskID: t.TaskID, Wire: *t.Error}, true
	}
	return nil, nil, false
}

// update answers the inputRequests of t not answered yet, and sends the
// answers with tasks/update (the extension's way to give a task input):
// the round at once to opts.AnswerRound, else each to opts.Answer.
func update(ctx context.Context, s Sender, t Task, opts Options, answered map[string]bool) error {
	if len(t.InputRequests) > MaxInputRequests {
		return fmt.Errorf("task %s asks %d questions at once, more than the %d a client answers", t.TaskID, len(t.InputRequests), MaxInputRequests)
	}
	round := map[string]json.RawMessage{}
	for key, raw := range t.InputRequests {
		if answered[key] {
			continue
		}
		var req struct {
			Method string `json:"method"`
		}
		if err := json.Unmarshal(raw, &req); err != nil || req.Method == "" {
			return fmt.Errorf("task %s: input request %q is not a request", t.TaskID, key)
		}
		round[key] = raw
	}
	if len(round) == 0 {
		return nil
	}
	answer := opts.AnswerRound
	if answer == nil {
		answer = func(ctx context.Context, round map[string]json.RawMessage) (map[string]json.RawMessage, error) {
			return answerEach(ctx, round, opts.Answer)
		}
	}
	responses, err := answer(ctx, round)
	if err != nil {
		return fmt.Errorf("task %s: %w", t.TaskID, err)
	}
	for key := range round {
		answered[key] = true
	}
	params := idParams(t.TaskID)
	params["inputResponses"], _ = json.Marshal(responses)
	if _, err := s.Send(ctx, "tasks/update", params); err != nil {
		return fmt.Errorf("tasks/update %s: %w", t.TaskID, err)
	}
	return nil
}

// answerEach answers the requests of round one by one with answer (nil
// declines them all).
func answerEach(ctx context.Context, round map[string]json.RawMessage, answer func(context.Context, string, json.RawMessage) (json.RawMessage, error)) (map[string]json.RawMessage, error) {
	responses := make(map[string]json.RawMessage, len(round))
	for key, raw := range round {
		var req struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		_ = json.Unmarshal(raw, &req) // checked by update
		res := json.RawMessage(`{"action":"decline"}`)
		if answer != nil {
			var err error
			if res, err = answer(ctx, req.Method, req.Params); err != nil {
				return nil, fmt.Errorf("answering %s: %w", req.Method, err)
			}
		}
		responses[key] = res
	}
	return responses, nil
}

func get(ctx context.Context, s Sender, id string) (Task, error) {
	raw, err := s.Send(ctx, "tasks/get", idParams(id))
	if err != nil {
		return Task{}, fmt.Errorf("tasks/get %s: %w", id, err)
	}
	var t Task
	if err := json.Unmarshal(raw, &t); err != nil {
		return Task{}, fmt.Errorf("tasks/get %s: %w", id, err)
	}
	if err := t.check(); err != nil {
		return Task{}, fmt.Errorf("tasks/get %s: %w", id, err)
	}
	if t.TaskID != id {
		return Task{}, fmt.Errorf("tasks/get %s answered for task %q", id, t.TaskID)
	}
	return t, nil
}

func result(ctx context.Context, s Sender, t Task) (json.RawMessage, error) {
	raw, err := s.Send(ctx, "tasks/result", idParams(t.TaskID))
	if err == nil {
		return raw, nil
	}
	if ctx.Err() != nil {
		return nil, cancel(ctx, s, t.TaskID)
	}
	if t.Status == Failed {
		return nil, fmt.Errorf("task %s failed%s: %w", t.TaskID, suffix(t.StatusMessage), err)
	}
	return nil, fmt.Errorf("tasks/result %s: %w", t.TaskID, err)
}

// cancel tells the server the caller gave up on task id, and returns the
// caller's reason (with the cancel's own failure, if any); a task handed
// over to another process is left to it, untold.
func cancel(ctx context.Context, s Sender, id string) error {
	cause := context.Cause(ctx)
	if errors.Is(cause, tool.ErrHandedOver) {
		return cause
	}
	cctx, stop := context.WithTimeout(context.WithoutCancel(ctx), cancelWait)
	defer stop()
	if _, err := s.Send(cctx, "tasks/cancel", idParams(id)); err != nil {
		return errors.Join(cause, fmt.Errorf("tasks/cancel %s: %w", id, err))
	}
	return cause
}

func idParams(id string) map[string]json.RawMessage {
	b, _ := json.Marshal(id)
	return map[string]json.RawMessage{"taskId": b}
}

func suffix(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + msg
}
