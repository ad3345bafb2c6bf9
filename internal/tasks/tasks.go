// Package tasks runs a request the client made as an MCP task (the tasks
// capability of protocol 2025-11-25, SEP-1686): it reads the task a
// request created, polls tasks/get at the interval the server asks for,
// fetches tasks/result once the task is done or waits for input, and
// cancels the task (tasks/cancel) when the caller gives up.
//
// It knows the wire shapes and the order of requests, not how they are
// sent: a Sender does that (mcpclient sends them beneath the go-sdk, which
// has no tasks, through internal/sdkwire's rewritten requests).
package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
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

// cancelWait bounds tasks/cancel sent after the caller gave up.
const cancelWait = 5 * time.Second

// Task is the state of a task as the server reports it.
type Task struct {
	TaskID        string  `json:"taskId"`
	Status        string  `json:"status"`
	StatusMessage string  `json:"statusMessage,omitempty"`
	PollInterval  float64 `json:"pollInterval,omitempty"` // milliseconds; 0: not given
}

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

// Created reads the result of a task-augmented request: the task it
// created, or nil when the server answered with the final result at once
// (a server may run an optional task synchronously).
func Created(result json.RawMessage) (*Task, error) {
	var top struct {
		Task *Task `json:"task"`
	}
	if err := json.Unmarshal(result, &top); err != nil {
		return nil, fmt.Errorf("reading the created task: %w", err)
	}
	if top.Task == nil {
		return nil, nil
	}
	if err := top.Task.check(); err != nil {
		return nil, fmt.Errorf("the created task: %w", err)
	}
	return top.Task, nil
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
	if t.PollInterval <= 0 {
		return DefaultPoll
	}
	return min(max(time.Duration(t.PollInterval*float64(time.Millisecond)), MinPoll), MaxPoll)
}

// Options tune Await. The zero value is ready to use.
type Options struct {
	// OnStatus is told each status the task reports (the first included),
	// when status or message changed. It must return quickly.
	OnStatus func(Task)
	// After waits d; nil is time.After (tests inject a clock).
	After func(d time.Duration) <-chan time.Time
}

// Await follows task t until it ends and returns the result tasks/result
// gives. When ctx ends first, it cancels the task (tasks/cancel, on a
// context of its own) and returns ctx's cause.
func Await(ctx context.Context, s Sender, t Task, opts Options) (json.RawMessage, error) {
	after := opts.After
	if after == nil {
		after = time.After
	}
	var last Task
	for {
		if t != last && opts.OnStatus != nil {
			opts.OnStatus(t)
		}
		last = t
		switch t.Status {
		case Completed, Failed, InputRequired:
			// tasks/result blocks while the task waits for input: the
			// server's questions arrive meanwhile, as requests to the client.
			return result(ctx, s, t)
		case Cancelled:
			return nil, fmt.Errorf("task %s was cancelled by the server%s", t.TaskID, suffix(t.StatusMessage))
		}
		select {
		case <-ctx.Done():
			return nil, cancel(ctx, s, t.TaskID)
		case <-after(t.poll()):
		}
		next, err := get(ctx, s, t.TaskID)
		if err != nil {
			if ctx.Err() != nil {
				return nil, cancel(ctx, s, t.TaskID)
			}
			return nil, err
		}
		t = next
	}
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
// caller's reason (with the cancel's own failure, if any).
func cancel(ctx context.Context, s Sender, id string) error {
	cctx, stop := context.WithTimeout(context.WithoutCancel(ctx), cancelWait)
	defer stop()
	cause := context.Cause(ctx)
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
