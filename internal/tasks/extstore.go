package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// The 2026-07-28 extension's side of a Store (StoreOptions.Extension):
// a body's questions go to the peer as the task's inputRequests, and the
// peer's tasks/update brings the answers.

// pendingAsk is one question of a task waiting for the peer's answer.
type pendingAsk struct {
	request json.RawMessage // {"method":…,"params":…}
	answer  chan json.RawMessage
}

// Ask puts a question (method, params) to the peer through task id (a
// body knows its own: IDFrom): the task is input_required, with the
// question among its inputRequests, until the peer answers it with
// tasks/update, or ctx ends. At most MaxInputRequests wait at once.
func (s *Store) Ask(ctx context.Context, id, method string, params json.RawMessage) (json.RawMessage, error) {
	request, err := json.Marshal(map[string]any{"method": method, "params": params})
	if err != nil {
		return nil, fmt.Errorf("asking %s: %w", method, err)
	}
	return s.ask(ctx, id, "", request)
}

// AskRound puts a round of questions to the peer at once through task
// id, each under its key in round (a request as a server writes it,
// {"method":…,"params":…}), and returns every answer under its key:
// the task shows them all among its inputRequests, and each leaves as
// the peer answers it (in as many tasks/update as it likes). A key
// another question of the task holds already is asked under one of the
// store's own.
func (s *Store) AskRound(ctx context.Context, id string, round map[string]json.RawMessage) (map[string]json.RawMessage, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		answers = make(map[string]json.RawMessage, len(round))
		first   error
	)
	for key, request := range round {
		wg.Go(func() {
			answer, err := s.ask(ctx, id, key, request)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && first == nil {
				first = fmt.Errorf("input request %q: %w", key, err)
				cancel(first) // the round fails: its other questions leave
			}
			answers[key] = answer
		})
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return answers, nil
}

// ask puts request to the peer through task id under key ("", or one a
// waiting question holds: the next of the store's own, q1, q2, …) and
// waits for its answer (Ask).
func (s *Store) ask(ctx context.Context, id, key string, request json.RawMessage) (json.RawMessage, error) {
	ask := &pendingAsk{request: request, answer: make(chan json.RawMessage, 1)}
	s.mu.Lock()
	r, ok := s.tasks[id]
	switch {
	case !s.ext || !ok || !r.ended.IsZero():
		s.mu.Unlock()
		return nil, errors.New("no task of the peer to ask through") // or one that ended: no one would answer
	case len(r.asks) >= MaxInputRequests:
		s.mu.Unlock()
		return nil, fmt.Errorf("task %s has %d questions waiting already", id, MaxInputRequests)
	}
	if r.asks == nil {
		r.asks = map[string]*pendingAsk{}
	}
	for _, taken := r.asks[key]; key == "" || taken; _, taken = r.asks[key] {
		r.asked++
		key = fmt.Sprintf("q%d", r.asked)
	}
	r.asks[key] = ask
	if r.task.Status == Working {
		r.task.Status = InputRequired
	}
	s.touch(r)
	snap := s.snapLocked(r, r.task)
	s.mu.Unlock()
	s.tell(snap)
	defer func() {
		s.mu.Lock()
		var snap *pendingSnapshot
		if r.asks[key] == ask { // left unanswered: update takes an answered one off itself
			delete(r.asks, key)
			if len(r.asks) == 0 && r.task.Status == InputRequired {
				r.task.Status = Working
			}
			s.touch(r)
			snap = s.snapLocked(r, r.task)
		}
		s.mu.Unlock()
		s.tell(snap)
	}()
	select {
	case a := <-ask.answer:
		return a, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// update delivers the answers of a tasks/update to the questions waiting,
// and takes the answered ones off the task at once: a tasks/get after
// the ack no longer lists them, whether or not their asker has woken. An
// answer to no waiting question is ignored.
func (s *Store) update(params json.RawMessage) (json.RawMessage, error) {
	var p struct {
		TaskID         string                     `json:"taskId"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &Error{CodeInvalidParams, fmt.Sprintf("tasks/update: %v", err)}
	}
	s.mu.Lock()
	r, ok := s.tasks[p.TaskID]
	if !ok || !s.ext {
		s.mu.Unlock()
		return nil, NoTask("tasks/update", p.TaskID)
	}
	answered := make(map[*pendingAsk]json.RawMessage, len(p.InputResponses))
	for key, answer := range p.InputResponses {
		if ask, ok := r.asks[key]; ok {
			answered[ask] = answer
			delete(r.asks, key)
		}
	}
	var snap *pendingSnapshot
	if len(answered) > 0 {
		if len(r.asks) == 0 && r.task.Status == InputRequired {
			r.task.Status = Working
		}
		s.touch(r)
		snap = s.snapLocked(r, r.task)
	}
	s.mu.Unlock()
	// Told before the body has its answers: the change it makes next
	// (another question, its end) is newer.
	s.tell(snap)
	for ask, answer := range answered {
		ask.answer <- answer // room for one; the ask left r.asks, so no other comes
	}
	return json.RawMessage(`{}`), nil
}

// cancelExt answers the extension's tasks/cancel of r: a running task
// ends cancelled, its body's context cancelled; an ended one keeps its
// end (cancelling is idempotent). Either way the task is dismissed: it
// frees its place among Max and still reads as it ended until Keep
// passes. The answer is the bare ack: the status is tasks/get's to tell.
func (s *Store) cancelExt(r *run) (json.RawMessage, error) {
	s.mu.Lock()
	var snap *pendingSnapshot
	if r.ended.IsZero() && r.task.Status != Cancelled {
		r.task.Status, r.task.StatusMessage = Cancelled, ""
		s.touch(r)
		snap = s.snapLocked(r, r.task)
	}
	if r.dismissed.IsZero() {
		r.dismissed = s.now()
	}
	s.mu.Unlock()
	r.cancel(nil)
	s.tell(snap)
	return json.RawMessage(`{}`), nil
}

// extWire is t, the state of r, in the extension's shape: an ended task
// carries its result or error, a waiting one its questions. s.mu must be
// held.
func (s *Store) extWire(r *run, t Task) map[string]any {
	m := map[string]any{
		"taskId":         t.TaskID,
		"status":         t.Status,
		"createdAt":      r.created.UTC().Format(time.RFC3339Nano),
		"lastUpdatedAt":  r.updated.UTC().Format(time.RFC3339Nano),
		"pollIntervalMs": t.PollInterval,
	}
	if r.keep > 0 {
		m["ttlMs"] = r.keep.Milliseconds()
	}
	if t.StatusMessage != "" {
		m["statusMessage"] = t.StatusMessage
	}
	switch {
	case t.Status == Completed:
		m["result"] = r.result
	case t.Status == Failed:
		code := CodeInternalError
		if te, ok := errors.AsType[*Error](r.err); ok {
			code = te.Code
		}
		m["error"] = WireError{Code: code, Message: t.StatusMessage}
	case t.Status == InputRequired && len(r.asks) > 0:
		reqs := make(map[string]json.RawMessage, len(r.asks))
		for key, ask := range r.asks {
			reqs[key] = ask.request
		}
		m["inputRequests"] = reqs
	}
	return m
}

// CodeInternalError is JSON-RPC's code for a failure of the receiver.
const CodeInternalError = -32603
